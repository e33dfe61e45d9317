#!/bin/sh
# A child program for the process and exec tests. The first argument picks
# what it does; the tests check what it printed, its exit code or the signal
# that ended it.
case "$1" in
exit) exit "$2" ;;                      # exit with the given code
echo) cat ;;                            # copy stdin to stdout
env) eval "printf '%s\n' \"\$$2\"" ;;   # print one environment variable
pwd) pwd ;;                             # print the working directory
lines) printf 'one\ntwo  \nthree\n\n' ;; # lines with trailing space and a blank last line
stderr) echo "to stderr" >&2 ;;         # write to stderr only
sid) ps -o sid= -p $$ ; echo $$ ;;      # session id, then own pid
ids) id -u; id -g ;;                    # user and group ids
sleep) exec sleep "$2" ;;               # sleep (killed by the tests)
term-ignored) trap '' TERM; echo ready; while :; do sleep 1; done ;; # needs SIGKILL
*) echo "child.sh: unknown mode $1" >&2; exit 99 ;;
esac
