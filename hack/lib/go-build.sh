# Sourced by hack/demo.sh and hack/build-test-binaries.sh: Go compiles that report how far they are, one progress
# line for all of them, and whether the machine has the memory to run several at once.
#
# A tracked compile is a name with files in ${PROGRESS_DIR}: <name>.t0 (its start, epoch seconds), <name>.phase
# ("listing", which includes downloading modules, then "compiling"), <name>.stale (the packages `go list` says it must compile: the total), <name>.out (the
# command's output: `go build -v` prints each package it compiles, `go test -c -x` each compile command; both are
# counted against <name>.stale), <name>.rc and <name>.took once it has ended. ${PROGRESS_DIR}/names lists the
# names in the order the line shows them (progress_register). progress_watch renders them as one line: in place
# on a terminal, every PROGRESS_LOG_EVERY seconds (20) otherwise.

# build_parallel: prints 1 when KF_BUILD_PARALLEL=1, or when it is unset and at least 8 GiB of memory are
# available (about 1.5 GiB for each compile or link of the largest packages, two of them per go build on 2 cores,
# a few go builds at once); 0 otherwise.
build_parallel() {
  local avail_kib
  if [[ -n "${KF_BUILD_PARALLEL:-}" ]]; then
    [[ "${KF_BUILD_PARALLEL}" == 1 ]] && echo 1 || echo 0
    return
  fi
  avail_kib="$(awk '/^MemAvailable:/ {print $2}' /proc/meminfo 2>/dev/null || true)"
  (( ${avail_kib:-0} >= 8 * 1024 * 1024 )) && echo 1 || echo 0
}

# progress_init [dir]: the directory holding the state files (created; the caller removes it).
progress_init() {
  PROGRESS_DIR="${1:-$(mktemp -d)}"
  mkdir -p "${PROGRESS_DIR}"
  export PROGRESS_DIR
}

# progress_register NAME...: adds names to the line (in this order), "queued" until tracked starts them.
progress_register() {
  printf '%s\n' "$@" >>"${PROGRESS_DIR}/names"
}

# tracked NAME DIR LIST_ARGS -- CMD...: in DIR, lists with `go list -deps` (LIST_ARGS: build flags and packages,
# one string split on blanks; "-test ..." for a test binary) the packages that are not in Go's build cache, then
# runs CMD with its output in <name>.out. CMD must print what it compiles (go build -v, go test -c -x). Returns
# CMD's exit status; the output of a failed `go list` (a module download that failed, say) is in <name>.out.
tracked() {
  local name="$1" dir="$2" list_args="$3" st="${PROGRESS_DIR}/$1" rc=0
  shift 4
  date +%s >"${st}.t0"
  echo "listing" >"${st}.phase"
  # shellcheck disable=SC2086 # LIST_ARGS is a list of words.
  if ! (cd "${dir}" && go list -deps -f '{{if .Stale}}{{.ImportPath}}{{end}}' ${list_args}) >"${st}.list" 2>"${st}.out"; then
    rc=1
  else
    # A test binary's packages are listed as "p [p.test]" and its main as "p.test"; compile commands say "-p p"
    # and "-p main".
    sed -E 's/ \[.*$//; s/^.*\.test$/main/' "${st}.list" >"${st}.stale"
    echo "compiling" >"${st}.phase"
    (cd "${dir}" && "$@") >>"${st}.out" 2>&1 || rc=$?
  fi
  echo $(( $(date +%s) - $(cat "${st}.t0") )) >"${st}.took"
  echo "${rc}" >"${st}.rc"
  return "${rc}"
}

# progress_done NAME: how many of <name>.stale's packages <name>.out shows compiled.
progress_done() {
  local st="${PROGRESS_DIR}/$1"
  [[ -s "${st}.stale" && -f "${st}.out" ]] || { echo 0; return; }
  sed -nE 's#^.*/compile .* -p ([^ ]+) .*$#\1#p; /^[^ #$]+$/p' "${st}.out" | grep -cFx -f "${st}.stale" || true
}

# fmt_secs N: 75 -> 1m15s.
fmt_secs() { printf '%dm%02ds' $(($1 / 60)) $(($1 % 60)); }

# progress_line PREFIX T0 NAME...: "PREFIX 3m12s: agent done, demo 104/388, kube linking, ocm listing" (packages
# compiled / packages to compile; "linking" once every package is compiled).
progress_line() {
  local prefix="$1" t0="$2" line sep=":" part name st total done n
  shift 2
  line="${prefix} $(fmt_secs $(( $(date +%s) - t0 )))"
  for name in "$@"; do
    st="${PROGRESS_DIR}/${name}"
    if [[ ! -f "${st}.t0" ]]; then
      part="${name} queued"
    elif [[ -f "${st}.rc" ]]; then
      part="${name} done"
      [[ "$(cat "${st}.rc")" == 0 ]] || part="${name} FAILED"
    elif [[ "$(cat "${st}.phase")" == compiling ]]; then
      total=$(wc -l <"${st}.stale")
      done=$(progress_done "${name}")
      (( done > total )) && done=${total}
      part="${name} ${done}/${total}"
      (( done == total )) && part="${name} linking"
    elif n=$(grep -c '^go: downloading ' "${st}.out" 2>/dev/null) && (( n > 0 )); then
      part="${name} listing, ${n} modules downloaded"
    else
      part="${name} listing"
    fi
    line+="${sep} ${part}"
    sep=","
  done
  echo "${line}"
}

# progress_summary NAME...: "agent 612 packages in 2m05s, demo 388 packages in 1m10s" for the ended compiles.
progress_summary() {
  local name st out="" total
  for name in "$@"; do
    st="${PROGRESS_DIR}/${name}"
    [[ -f "${st}.took" ]] || continue
    total=0; [[ -f "${st}.stale" ]] && total=$(wc -l <"${st}.stale")
    out+="${out:+, }${name} ${total} packages in $(fmt_secs "$(cat "${st}.took")")"
  done
  echo "${out}"
}

# progress_watch FD PREFIX T0 PID...: until every PID has exited, writes progress_line for the registered names
# to FD: in place (once a second) when FD is a terminal, otherwise every PROGRESS_LOG_EVERY seconds (20) and once
# at the end.
progress_watch() {
  local fd="$1" prefix="$2" t0="$3" pid alive last=0 cols line names
  shift 3
  cols=$(tput cols 2>/dev/null || echo 80)
  (( cols > 20 )) || cols=80
  while :; do
    alive=0
    for pid in "$@"; do kill -0 "${pid}" 2>/dev/null && alive=1; done
    names="$(cat "${PROGRESS_DIR}/names" 2>/dev/null || true)"
    # shellcheck disable=SC2086 # names is a list of words.
    line="$(progress_line "${prefix}" "${t0}" ${names})"
    if [[ -t "${fd}" ]]; then
      # Within the terminal's width (a wrapped line could not be rewritten in place): without the prefix when the
      # line is too long, then cut.
      (( ${#line} < cols )) || line="${line#"${prefix} "}"
      printf '\r%s\033[K' "${line:0:$((cols - 1))}" >&"${fd}"
      (( alive )) || printf '\n' >&"${fd}"
    elif (( ! alive || $(date +%s) - last >= ${PROGRESS_LOG_EVERY:-20} )); then
      echo "${line}" >&"${fd}"
      last=$(date +%s)
    fi
    (( alive )) || return 0
    sleep 1
  done
}
