/* faults.c — the switch of faults.h; empty without -DUVEV_FAULTS. */
#include "uvev.h"

#ifdef UVEV_FAULTS
static int armed_op, armed_err;

void uvev_fault_arm(int op, int err) {
  armed_op = op;
  armed_err = err;
}

int uvev__fault(int op) {
  if (armed_op != op) return 0;
  armed_op = 0;
  return armed_err;
}
#endif
