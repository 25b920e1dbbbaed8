#!/usr/bin/env bash
# fuzzfarm nightly: run tonight's campaign, then triage it against the previous night.
#
#   RESULTS=/mnt/fuzzfarm/results RAY_ADDRESS=head:6379 cluster/nightly.sh
#
# Each night writes $RESULTS/nightly-YYYY-MM-DD (a results directory of `fuzzfarm run`) and,
# when there is an earlier completed night and `fuzzfarm triage` exists,
# $RESULTS/triage-YYYY-MM-DD (the comparison).  The script's own lines go to stdout and to
# $RESULTS/logs/nightly-YYYY-MM-DD.log; fuzzfarm's output goes to that log only.
#
# Running it again the same day is safe: a night whose campaign completed is not run
# again (only triaged), and an unfinished one (interrupted, failed, or its driver killed)
# is continued with `fuzzfarm run --resume`, which loses no unit and counts none twice.
# A night is complete when the status of every campaign in it
# (DIR/_campaign/<run_id>/status.json) says "state": "completed".  A lock
# ($RESULTS/.nightly.lock, flock) keeps two nights from overlapping, on one machine or,
# with $RESULTS on NFSv4, across machines.
#
# Configuration (environment):
#   RESULTS      results root, shared by every node of the cluster (required)
#   CAMPAIGN     campaign file (default: campaigns/nightly.toml next to this script)
#   FUZZFARM     the fuzzfarm executable (default: fuzzfarm on PATH)
#   RAY_ADDRESS  a running cluster's head, e.g. head:6379 (default: none, so
#                `fuzzfarm run` starts a one-machine Ray of its own)
#   KEEP_DAYS    keep the nights of the last KEEP_DAYS days, delete older night, triage
#                and log files (default 30; 0 keeps everything)
#   NIGHT        tonight's date, YYYY-MM-DD (default: `date +%F`; set it to re-run or
#                finish a given night)
#   LOCK_WAIT    seconds to wait for the lock before giving up (default 0)
#   PYTHON       a python3 to read status files with (default python3)
#
# Exit status: 0 the night completed (and triage found nothing new, or was skipped);
# triage's status when it is not 0 (new failures); 2 bad configuration or bad input (a
# campaign fuzzfarm rejected); 75 another nightly holds the lock; 130 the campaign was
# interrupted; any other status is `fuzzfarm run`'s (3: devices were lost and units are
# left).  After 130 or a failure the next run of this script resumes the night.
set -euo pipefail

script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
FUZZFARM=${FUZZFARM:-fuzzfarm}
CAMPAIGN=${CAMPAIGN:-$script_dir/campaigns/nightly.toml}
RESULTS=${RESULTS:-}
RAY_ADDRESS=${RAY_ADDRESS:-}
KEEP_DAYS=${KEEP_DAYS:-30}
NIGHT=${NIGHT:-$(date +%F)}
LOCK_WAIT=${LOCK_WAIT:-0}
PYTHON=${PYTHON:-python3}

die() {  # die STATUS MESSAGE: one line on stderr, then exit
    printf 'nightly: %s\n' "$2" >&2
    exit "$1"
}

[[ -n $RESULTS ]] ||
    die 2 "RESULTS is not set; set it to the shared results directory, e.g. RESULTS=/mnt/fuzzfarm/results"
if ! [[ $NIGHT =~ ^[0-9]{4}-[0-9]{2}-[0-9]{2}$ ]] || ! date -d "$NIGHT" >/dev/null 2>&1; then
    die 2 "NIGHT=$NIGHT is not a date; use YYYY-MM-DD, e.g. NIGHT=$(date +%F)"
fi
[[ $KEEP_DAYS =~ ^[0-9]+$ ]] ||
    die 2 "KEEP_DAYS=$KEEP_DAYS is not a whole number of days; use e.g. KEEP_DAYS=30 (0 keeps everything)"
[[ $LOCK_WAIT =~ ^[0-9]+$ ]] ||
    die 2 "LOCK_WAIT=$LOCK_WAIT is not a whole number of seconds; use e.g. LOCK_WAIT=600"
command -v "$FUZZFARM" >/dev/null 2>&1 ||
    die 2 "FUZZFARM=$FUZZFARM is not an executable; set FUZZFARM to the fuzzfarm of your virtual environment"
command -v "$PYTHON" >/dev/null 2>&1 ||
    die 2 "PYTHON=$PYTHON is not an executable; set PYTHON to a python3"
command -v flock >/dev/null 2>&1 || die 2 "flock (util-linux) is not installed"
[[ -r $CAMPAIGN ]] ||
    die 2 "CAMPAIGN=$CAMPAIGN is not a readable file; set CAMPAIGN to a campaign TOML file"

mkdir -p "$RESULTS/logs"
RESULTS=$(cd "$RESULTS" && pwd)
LOG=$RESULTS/logs/nightly-$NIGHT.log
tonight=$RESULTS/nightly-$NIGHT
triage_out=$RESULTS/triage-$NIGHT

log() {
    printf '%s nightly: %s\n' "$(date '+%F %T')" "$*" | tee -a "$LOG"
}

# One nightly at a time: fd 9 holds the lock until the script exits.
exec 9>>"$RESULTS/.nightly.lock"
if ! flock -w "$LOCK_WAIT" 9; then
    die 75 "another nightly holds $RESULTS/.nightly.lock; not starting a second one"
fi

# night_state DIR: "completed" when every campaign in DIR has a status saying completed,
# "unfinished" when one has no status yet or another state (running with its driver gone,
# interrupted, incomplete, failed), "none" when DIR holds no campaign.  `fuzzfarm run
# --resume DIR` picks the same campaign: the latest one that is not completed.
night_state() {
    local dir=$1 campaign state seen=0
    for campaign in "$dir"/_campaign/*/; do
        [[ -d $campaign ]] || continue
        seen=1
        state=$("$PYTHON" -c 'import json, sys; print(json.load(open(sys.argv[1])).get("state", ""))' \
            "${campaign}status.json" 2>/dev/null) || state=unknown
        [[ $state == completed ]] || { echo unfinished; return; }
    done
    if (( seen )); then echo completed; else echo none; fi
}

address_args=()
[[ -n $RAY_ADDRESS ]] && address_args=(--address "$RAY_ADDRESS")

# run_fuzzfarm ARGS...: fuzzfarm's output to the log; sets rc to its exit status.
rc=0
run_fuzzfarm() {
    log "running: $FUZZFARM $*"
    rc=0
    "$FUZZFARM" "$@" >>"$LOG" 2>&1 || rc=$?
    log "fuzzfarm $1 exited with status $rc"
}

prune() {
    (( KEEP_DAYS > 0 )) || return 0
    local cutoff path name day
    cutoff=$(date -d "$NIGHT - $KEEP_DAYS days" +%F)
    for path in "$RESULTS"/nightly-* "$RESULTS"/triage-* "$RESULTS"/logs/nightly-*.log; do
        [[ -e $path ]] || continue
        name=${path##*/}
        name=${name%.log}
        day=${name#*-}
        [[ $day =~ ^[0-9]{4}-[0-9]{2}-[0-9]{2}$ ]] || continue
        [[ $day < $cutoff ]] || continue
        [[ $path == "$baseline" ]] && continue
        log "pruning $path (older than $KEEP_DAYS days)"
        rm -rf -- "$path"
    done
}

log "night $NIGHT: campaign $CAMPAIGN, results $tonight${RAY_ADDRESS:+, cluster $RAY_ADDRESS}"

# The baseline for triage: the latest earlier night that completed (found before the run,
# so that pruning never removes it).
baseline='' baseline_day=''
for dir in "$RESULTS"/nightly-*; do
    [[ -d $dir ]] || continue
    day=${dir##*/nightly-}
    [[ $day =~ ^[0-9]{4}-[0-9]{2}-[0-9]{2}$ && $day < $NIGHT ]] || continue
    if [[ $(night_state "$dir") != completed ]]; then
        log "$dir is unfinished; not a baseline"
    elif [[ -z $baseline_day || $baseline_day < $day ]]; then
        baseline=$dir baseline_day=$day
    fi
done

state=none
[[ -d $tonight ]] && state=$(night_state "$tonight")
case $state in
    completed)
        log "$tonight already completed; not running it again" ;;
    unfinished)
        run_fuzzfarm run --resume "$tonight" "${address_args[@]}" ;;
    none)
        run_fuzzfarm run --campaign "$CAMPAIGN" "${address_args[@]}" --out "$tonight" ;;
esac

case $rc in
    0) ;;
    130) log "the campaign was interrupted; the next run resumes $tonight"; prune; exit 130 ;;
    2) log "fuzzfarm rejected its input (see $LOG); no triage"; exit 2 ;;
    *) log "the campaign failed (see $LOG); the next run continues $tonight; no triage"; prune; exit "$rc" ;;
esac

status=0
if ! "$FUZZFARM" triage --help >/dev/null 2>&1; then
    log "fuzzfarm has no triage command; skipped triage"
elif [[ -z $baseline ]]; then
    log "no earlier completed night in $RESULTS; skipped triage"
else
    run_fuzzfarm triage --baseline "$baseline" --current "$tonight" --out "$triage_out"
    status=$rc
    if (( status != 0 )); then
        log "triage reported new failures or failed (status $status): see $triage_out"
    fi
fi

prune
log "night $NIGHT done (status $status)"
exit "$status"
