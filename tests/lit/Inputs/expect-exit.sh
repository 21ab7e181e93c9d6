# expect-exit CODE COMMAND [ARG...]: runs COMMAND and succeeds only when it
# exits with CODE. Its output passes through, so that it can be piped into
# FileCheck; lit's pipefail then fails the RUN line on a wrong code.
code=$1
shift
"$@"
rc=$?
if [ "$rc" -ne "$code" ]; then
  echo "expect-exit: $1 exited with $rc, expected $code" >&2
  exit 1
fi
