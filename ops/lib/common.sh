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
