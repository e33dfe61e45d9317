#include "uvev.h"

/* uvev_loop_close_all starts closing every handle of the loop that is not
 * closing yet (the keeper and the due timer aside, which uvev_loop_shutdown
 * closes, and a passed handle's stand-in, which its write's callback closes when the
 * pipe carrying it closes): what the loop of a reactor dropped without Close still holds. Each handle's close callback frees it as a kind's close
 * would; the records they push are released with the loop. First the
 * records not released yet are (a connection nobody took is closed by its
 * release, which must not come after the walk closed it), and each
 * listener is closed as its Close would (its socket and its spare handle,
 * which uv_close alone would leave open and miscount). */
static void uvev__close_one(uv_handle_t *h, void *arg) {
  uvev_loop *l = arg;
  if (h == (uv_handle_t *)&l->keeper || h == (uv_handle_t *)&l->due || uv_is_closing(h) || uvev__is_pass(h)) return;
  uv_close(h, uvev__on_close);
}

void uvev_loop_close_all(uvev_loop *l) {
  uvev__release_all(l); /* a record's payload may be a handle, which its release closes */
  uvev__listeners_close(l);
  uv_walk(&l->loop, uvev__close_one, l);
}
