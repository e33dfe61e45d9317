/* m1_sizes.c: raw libuv comparator for workload M1 (memory cost of one
 * timer handle: struct size, malloc block size, measured heap per timer). */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <uv.h>

#define COUNT 100000

int main(void) {
  uv_timer_t *one = malloc(sizeof(uv_timer_t));
  size_t usable = malloc_usable_size(one);
  free(one);

  uv_timer_t **timers = malloc(COUNT * sizeof(*timers));
  struct mallinfo2 mid = mallinfo2();
  for (int i = 0; i < COUNT; i++)
    timers[i] = malloc(sizeof(uv_timer_t));
  struct mallinfo2 after = mallinfo2();
  /* Count both arenas (uordblks) and mmapped chunks (hblkhd), but exclude the
   * pointer array itself. */
  size_t used = (after.uordblks + after.hblkhd) - (mid.uordblks + mid.hblkhd);
  for (int i = 0; i < COUNT; i++)
    free(timers[i]);
  free(timers);

  printf("M1 raw-c timer_bytes=%zu timer_alloc_bytes=%zu "
         "timer_heap_bytes_per=%zu\n",
         sizeof(uv_timer_t), usable + 8, (used + COUNT / 2) / COUNT);
  return 0;
}
