# Sourced by .ci/run and .ci/training from the repository root: finds cargo, prints its
# version, and defines `stage NAME`, which prints after each stage its seconds, the CPU seconds
# its commands used (which other work on the machine changes less) and the load average, then
# the seconds since the start.
if ! command -v cargo >/dev/null 2>&1; then
  if [ -x "$HOME/.cargo/bin/cargo" ]; then
    export PATH="$HOME/.cargo/bin:$PATH"
  else
    echo "cargo not found: install the Rust toolchain (rustup) first" >&2
    exit 1
  fi
fi
cargo --version
clock_ticks=$(getconf CLK_TCK 2>/dev/null || echo 100)
cpu_seconds() {
  local stat
  if read -r -a stat 2>/dev/null </proc/$$/stat; then
    echo $(((stat[15] + stat[16]) / clock_ticks)) # the finished commands' user and system time
  else
    echo 0
  fi
}
stage_start=0
stage_cpu=0
stage() {
  local cpu load
  cpu=$(cpu_seconds)
  load=$(cut -d ' ' -f 1 /proc/loadavg 2>/dev/null || echo '?')
  echo "== $1: $((SECONDS - stage_start)) s, CPU $((cpu - stage_cpu)) s, load $load; ${SECONDS} s in all"
  stage_start=$SECONDS
  stage_cpu=$cpu
}
