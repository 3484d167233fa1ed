# Shared helpers for ops/ scripts. Source it: . "$(dirname "$0")/lib/common.sh"
RDMABLOCK_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"

# Finds a JDK >= 25 (JAVA_HOME if new enough, else /usr/lib/jvm/*), exports RDMABLOCK_JAVA; fails with a message
# that says what to install.
find_jdk25() {
  local cand v
  for cand in "${JAVA_HOME:-}" /usr/lib/jvm/temurin-25-jdk-amd64 /usr/lib/jvm/*; do
    [ -n "$cand" ] && [ -x "$cand/bin/java" ] || continue
    v=$("$cand/bin/java" -XshowSettings:properties -version 2>&1 | awk -F'= ' '/java.specification.version/ {print $2}')
    if [ -n "$v" ] && [ "${v%%.*}" -ge 25 ] 2>/dev/null; then
      RDMABLOCK_JAVA_HOME="$cand"; RDMABLOCK_JAVA="$cand/bin/java"
      export RDMABLOCK_JAVA_HOME RDMABLOCK_JAVA
      return 0
    fi
  done
  echo "error: rdmablock needs a JDK >= 25 (none found in JAVA_HOME or /usr/lib/jvm)." >&2
  echo "  Install one, e.g. Temurin 25: apt-get install temurin-25-jdk (Adoptium apt repository)," >&2
  echo "  or unpack a JDK 25 under /usr/lib/jvm. Maven selects it by itself (maven-toolchains-plugin)." >&2
  return 1
}

need_cmd() {
  command -v "$1" >/dev/null 2>&1 || { echo "error: '$1' not found; install it (Debian package: ${2:-$1})" >&2; return 1; }
}

# descendants <pid>: prints every descendant pid of <pid> (children first-level, then theirs), one per line.
descendants() {
  local c
  for c in $(pgrep -P "$1" 2>/dev/null); do echo "$c"; descendants "$c"; done
}

# run_bounded <seconds> <label> <cmd...>: runs cmd; if it is still running after <seconds>, prints the thread stacks
# of every JVM under it (jcmd Thread.print, also kept in a file), stops the whole process tree (TERM, then KILL
# after 20 s) and returns 124. Otherwise returns the command's status. A hang thus fails the step with the place it
# waits instead of eating the caller's (CI's) time budget.
run_bounded() {
  local secs="$1" label="$2" pid t0=$SECONDS p dump jcmd
  shift 2
  "$@" &
  pid=$!
  # a background job ignores Ctrl-C (SIGINT): pass an interrupt or TERM of ours on to the whole tree
  trap 'kill -TERM $pid $(descendants $pid) 2>/dev/null; trap - INT TERM; exit 130' INT TERM
  while kill -0 "$pid" 2>/dev/null; do
    if [ $((SECONDS - t0)) -ge "$secs" ]; then
      dump="$(mktemp "${TMPDIR:-/tmp}/rdmablock-hang-${label//[^a-zA-Z0-9]/_}.XXXXXX.txt")"
      jcmd="${RDMABLOCK_JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}/bin/jcmd"
      echo "== $label: still running after ${secs}s: thread stacks of every JVM under it follow (also in $dump)"
      for p in "$pid" $(descendants "$pid"); do
        if [ "$(basename "$(readlink "/proc/$p/exe" 2>/dev/null)")" = java ]; then
          { echo "---- pid $p: $(tr '\0' ' ' < "/proc/$p/cmdline" | cut -c1-300)"
            timeout 30 "$jcmd" "$p" Thread.print 2>&1; } >> "$dump"
        fi
      done
      cat "$dump"
      local tree; tree="$pid $(descendants "$pid")"
      kill -TERM $tree 2>/dev/null
      for _ in $(seq 20); do kill -0 "$pid" 2>/dev/null || break; sleep 1; done
      kill -KILL $tree $(descendants "$pid") 2>/dev/null
      wait "$pid" 2>/dev/null
      trap - INT TERM
      echo "== $label: FAILED: stopped after ${secs}s (bound), thread stacks in $dump"
      return 124
    fi
    sleep 2
  done
  trap - INT TERM
  wait "$pid"
}

# real_trace DIR: prints the path of the real block trace the quickstart replays: $RDMABLOCK_TRACE when set, else the
# copy shipped in the repository (ops/data/msn-fs-30s.trace.gz, see ops/data/README.md) unpacked into DIR and checked
# against its SHA-256. Reads nothing outside the repository. Returns 1 (with a message on stderr) when it cannot.
real_trace() {
  local dir="$1" gz="$RDMABLOCK_ROOT/ops/data/msn-fs-30s.trace.gz" out
  local sha="7120325e0dd83a82bec022e477ab545f36202afc2b746056bf6a52f807b702e8"
  if [ -n "${RDMABLOCK_TRACE:-}" ]; then
    [ -r "$RDMABLOCK_TRACE" ] || { echo "RDMABLOCK_TRACE=$RDMABLOCK_TRACE is not readable" >&2; return 1; }
    echo "$RDMABLOCK_TRACE"; return 0
  fi
  [ -r "$gz" ] || { echo "the shipped trace $gz is missing (a partial checkout?)" >&2; return 1; }
  out="$dir/msn-fs-30s.trace"
  gzip -dc "$gz" > "$out" || { echo "cannot unpack $gz into $dir" >&2; return 1; }
  echo "$sha  $out" | sha256sum -c --status || { echo "$gz unpacks to another SHA-256 than $sha" >&2; return 1; }
  echo "$out"
}
