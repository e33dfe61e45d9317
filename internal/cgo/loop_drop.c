#include "uvev.h"

/* uvev_loop_close_all starts closing every handle of the loop that is not
 * closing yet (the keeper aside): what the loop of a reactor dropped without
 * Close still holds. Each handle's close callback frees it as a kind's close
 * would; the records they push are released with the loop. */
static void uvev__close_one(uv_handle_t *h, void *arg) {
  uvev_loop *l = arg;
  if (h == (uv_handle_t *)&l->keeper || uv_is_closing(h)) return;
  uv_close(h, uvev__on_close);
}

void uvev_loop_close_all(uvev_loop *l) { uv_walk(&l->loop, uvev__close_one, l); }
