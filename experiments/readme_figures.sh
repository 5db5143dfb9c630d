#!/usr/bin/env bash
# Regenerate every figure in the README and the docs into results/ (about 3 hours on 2
# cores, one of them the memory of a one-hour run), or only the sections named:
#
#   bash experiments/readme_figures.sh                    # every section
#   bash experiments/readme_figures.sh hunts correct      # only these
#
# Sections: bench, default-swarm, hunts, compares, correct, traces, sweeps, memory,
# speed-history, timed, studies. The README and docs tables are refreshed from results/
# at the end either way (experiments/update_readme.py).
# Run on an otherwise idle machine: throughput and seconds are timings.
set -euo pipefail
cd "$(dirname "$0")/.."
R=results
SECTIONS=(bench default-swarm hunts compares correct traces sweeps memory speed-history timed
          studies)

bench() {
    # Speed, memory (10 million walks included) and JIT time.
    kraftwalk bench --seconds 20 --cold --memory-walks 100000 --memory-walks 1000000 \
        --memory-walks 10000000 --out "$R"
}

default_swarm() {
    # The README's first command as a newcomer runs it: an empty kernel cache (so its
    # JIT seconds are the first compile) and the default run folder, kraftwalk-runs/<id>.
    local T
    T=$(mktemp -d)
    (cd "$T" && XDG_CACHE_HOME="$T/cache" kraftwalk swarm) | tee "$R/default-swarm.txt"
    kraftwalk plot "$T"/kraftwalk-runs/* --out "$R/default-swarm-walks.png"
    rm -rf "$T"
}

hunts() {
    # Time to the first violation: swarm vs fixed vs uniform weights, for every mutation
    # that needs no feature (the feature ones have their own tables below; uniform weights
    # give a feature's family no more than the others, so most of their uniform hunts would
    # spend the whole budget). A liveness mutation is hunted once, in its timed scenario.
    local plain
    plain=$(python -c "from kraftwalk.vocabulary.mutations import MUTATIONS as M; print(' '.join(
        '--mutation ' + m.name for m in M.values() if not m.needs and m.kind != 'statistics'))")
    # shellcheck disable=SC2086
    kraftwalk hunt $plain --seeds 5 --duration 60 --weights swarm --weights fixed \
        --weights uniform --out "$R" --name hunt
    # The snapshot mutations (hunt turns --snapshots on for them).
    kraftwalk hunt --mutation snapshot-above-hw --mutation leader-loads-snapshot --seeds 5 \
        --duration 60 --weights swarm --weights fixed --weights uniform --out "$R" --name hunt-snapshots
    # The voter-change mutations (hunt turns --reconfig on for them), and again with the check
    # that sees the second pending change switched off, so that what it leads to is what counts.
    kraftwalk hunt --mutation reconfig-before-commit --mutation two-pending-changes --seeds 5 \
        --duration 60 --weights swarm --weights fixed --weights uniform --out "$R" --name hunt-reconfig
    kraftwalk hunt --mutation reconfig-before-commit --mutation two-pending-changes --seeds 5 \
        --duration 60 --disable-check AtMostOneUncommittedVoterSet --out "$R" --name hunt-reconfig-deep
    # Disk loss without directory ids (hunt turns --disk-loss on for it), and again with the
    # checks that see the empty disk's second vote and the entry on too few keys switched off.
    kraftwalk hunt --mutation wiped-replica-same-id --seeds 5 --duration 60 --weights swarm \
        --weights fixed --weights uniform --out "$R" --name hunt-disk-loss
    kraftwalk hunt --mutation wiped-replica-same-id --seeds 5 --duration 60 \
        --disable-check VoteUniqueness --disable-check MajorityReachedHighWatermark \
        --out "$R" --name hunt-disk-loss-deep
    # The deep Figure 8: with the two checks that see the premature HW directly off, only
    # real data loss counts.
    kraftwalk hunt --mutation commit-old-epoch --seeds 5 --duration 120 \
        --disable-check CommitCurrentEpoch --disable-check HighWatermarkMonotonic \
        --out "$R" --name hunt-deep
    # The same hunts on seeds the swarm weights were never tuned on.
    kraftwalk hunt --all --seeds 10 --first-seed 1000 --duration 60 --out "$R" --name hunt-seeds-1000
    kraftwalk hunt --mutation commit-old-epoch --seeds 10 --first-seed 1000 --duration 120 \
        --disable-check CommitCurrentEpoch --disable-check HighWatermarkMonotonic \
        --out "$R" --name hunt-deep-seeds-1000
    # Every mutation under the newest release and under 4.0 (the switches differ from 3.9.1 on
    # in timing rules only, so the swarm hunts find the same walks).
    H=$(mktemp -d)
    for k in 4.0 4.3; do
        kraftwalk hunt --all --seeds 5 --duration 30 --kafka "$k" --out "$H" --name "hunt-kafka-$k"
        mv "$H/hunt-kafka-$k.md" "$H/hunt-kafka-$k.parquet" "$R/"
    done
    rm -rf "$H"
    # The mutations that are Kafka's own bugs (their JIRA in the table), every one in 5 of 5 seeds.
    H=$(mktemp -d)
    kraftwalk hunt --mutation hw-at-epoch-start --mutation restarted-leader-keeps-leading \
        --mutation no-check-quorum --mutation no-flush-after-append \
        --mutation observer-skips-flush --mutation non-voter-candidate \
        --mutation check-quorum-counts-leader --mutation voter-skips-bootstrap-fetch --seeds 5 \
        --duration 30 --out "$H" --name hunt-kafka-bugs
    mv "$H/hunt-kafka-bugs.md" "$H/hunt-kafka-bugs.parquet" "$R/"
    rm -rf "$H"
}

compares() {
    # A statistics bug (KAFKA-18345), before and after its fix over the same walks.
    E=$(mktemp -d)
    (cd "$E" && kraftwalk elect --kafka 4.0 --kafka 4.0.1 --pre-vote off --voters 7 \
        --observers 0 --walks 4000 --out r > /dev/null && kraftwalk compare r --by kafka --out compare > /dev/null)
    cp "$E/compare/compare.md" "$R/compare-kafka-18345.md"
    cp "$E/compare/compare.png" "$R/compare-kafka-18345.png"
    rm -rf "$E"
    # Another (KAFKA-15100): the mutation against the correct model over the same walks.
    E=$(mktemp -d)
    (cd "$E" && kraftwalk elect --kafka 4.0 --scenario leader-isolated --voters 3 --walks 4000 \
        --out a > /dev/null && kraftwalk elect --kafka 4.0 --scenario leader-isolated --voters 3 \
        --walks 4000 --mutation park-diverging-fetch --out b > /dev/null \
        && kraftwalk compare a b --out compare > /dev/null)
    cp "$E/compare/compare.md" "$R/compare-kafka-15100.md"
    cp "$E/compare/compare.png" "$R/compare-kafka-15100.png"
    rm -rf "$E"
    # A liveness bug's cost, with the property that would stop its walks off.
    E=$(mktemp -d)
    (cd "$E" && kraftwalk elect --scenario random-faults --voters 3 --observers 0 --walks 500 \
        --seed 7 --out a > /dev/null && kraftwalk elect --scenario random-faults --voters 3 \
        --observers 0 --walks 500 --seed 7 --mutation no-fetch-timer-reset --disable-check HealthyLeaderKept --out b \
        > /dev/null && kraftwalk compare a b --out compare > /dev/null)
    cp "$E/compare/compare.md" "$R/compare-no-fetch-timer-reset.md"
    rm -rf "$E"
}

correct() {
    # The correct model must find nothing.
    kraftwalk hunt --mutation none --seeds 1 --duration 600 --out "$R" --name hunt-correct
    # ... under every release whose swarm walks differ, every feature on, 10 minutes each:
    # nothing but the settled findings of results/findings/.
    python experiments/correct_model.py --seconds 600 --out "$R"
    # ... and its timed walks: every release, every scenario, every property (8 minutes).
    python experiments/correct_liveness.py --out "$R"
}

traces() {
    local T
    # A real shrunk trace.
    T=$(mktemp -d)
    kraftwalk swarm --walks 2000 --mutation restarted-leader-keeps-leading --no-fail-on-violation \
        --out "$T/run" > /dev/null
    COLUMNS=100 kraftwalk replay "$T/run" --shrink --itf "$R/trace-example.itf.json" > "$R/trace-example.txt"
    rm -rf "$T/run"
    # The single-server membership bug, shrunk: with the checks that see the pending changes
    # and the disjoint majorities off, what remains is a committed entry lost.
    kraftwalk swarm --reconfig --voters 3 --observers 2 --walks 20000 --mutation reconfig-before-commit \
        --disable-check AtMostOneUncommittedVoterSet --disable-check QuorumOverlap \
        --no-fail-on-violation --out "$T/run" > /dev/null
    COLUMNS=110 kraftwalk replay "$T/run" --shrink --itf "$R/trace-single-server-bug.itf.json" \
        > "$R/trace-single-server-bug.txt"
    rm -rf "$T/run"
    # A wiped disk that votes under its old key, shrunk to the leader that lacks the entry.
    kraftwalk swarm --disk-loss --walks 20000 --mutation wiped-replica-same-id \
        --disable-check VoteUniqueness --disable-check MajorityReachedHighWatermark \
        --no-fail-on-violation --out "$T/run" > /dev/null
    COLUMNS=110 kraftwalk replay "$T/run" --shrink --itf "$R/trace-wiped-replica.itf.json" \
        > "$R/trace-wiped-replica.txt"
    rm -rf "$T/run"
}

sweeps() {
    # The shipped sweeps, their summaries and reports (the sweep folders' datasets are large
    # and stay out of results/).
    local T
    T=$(mktemp -d)
    for name in safety disruptions; do
        rm -rf "$R/sweep-$name"
    done
    kraftwalk sweep experiments/sweep-safety.toml --out "$T/sweep-safety" > /dev/null
    kraftwalk sweep experiments/sweep-disruptions.toml --no-fail-on-violation \
        --out "$T/sweep-disruptions" > /dev/null
    for name in safety disruptions; do
        kraftwalk report "$T/sweep-$name" --out "$R/sweep-$name"
        cp "$T/sweep-$name/summary.md" "$T/sweep-$name/summary.parquet" "$R/sweep-$name/"
    done
    python experiments/sweep_by_voters.py "$T/sweep-safety" --out "$R/sweep-safety/by-voters.md"
    rm -rf "$T"
}

memory() {
    # Peak memory of one-minute and one-hour swarms, of the safety sweep and of a sweep
    # of many cells.
    python experiments/memory.py --seconds 60 --seconds 3600 --nice \
        --sweep experiments/sweep-safety.toml --out "$R"
    python experiments/memory.py --append --sweep experiments/sweep-many-cells.toml --out "$R"
}

speed_into() {
    # compare_speed.py's two files as results/NAME.md and results/NAME.json.
    local name=$1 T
    shift
    T=$(mktemp -d)
    python experiments/compare_speed.py "$@" --out "$T"
    mv "$T/compare-speed.md" "$R/$name.md"
    mv "$T/compare-speed.json" "$R/$name.json"
    rm -rf "$T"
}

speed_history() {
    # Each change's speed, side by side against the checkout before it: both sides are
    # pinned (--old and --new), so a rerun measures the same change again, on this machine.
    # Resume and coverage against the checkout before them.
    speed_into compare-speed --old 1e54cdc --new 1732a31 --rounds 7
    # The transition/chooser split of the kernels against its parent commit.
    speed_into compare-speed-transition --old 1fc21b82e8096a753beff6191a2aa110804f8eb3 \
        --new 1732a31 --rounds 7
    # Timer intents in the handlers (the timed mode's seam) against the checkout before them.
    speed_into compare-speed-intents --old 00d015a --new 1db4146 --rounds 5
    # Snapshots and voter changes (issue 10) against the checkout before them (the md's
    # caption and its "new" name were written by hand).
    speed_into compare-speed-issue10 --old 6731bea --new c8ad53a --rounds 3
    # Compile time (issue 11): against the kernels before its compile levers (77253bf) and
    # against the checkout the speed issue started from (1e54cdc).
    speed_into compare-speed-compile --old 77253bf --new adeaeca --rounds 3
    speed_into compare-speed-issue11 --old 1e54cdc --new d1c7188 --walks 200000 --rounds 3
    # Every kernel optimized once in its entry point, the step inlined (against 45ae600);
    # every feature on against the first checkout with all three (24a9e32); the timed mode
    # against its first version with a bench (50142cc).
    speed_into compare-speed-link --old 45ae600 --new 1437395 --walks 200000 --rounds 3
    # One compile per kernel for plain argument types (against 93b39c6).
    speed_into compare-speed-plain --old 93b39c6 --new d1c7188 --walks 200000 --rounds 3
    speed_into compare-speed-features-first --old 24a9e32 --new d1c7188 --walks 200000 \
        --rounds 3 --extra "--snapshots --reconfig --disk-loss"
    speed_into compare-speed-timed-first --old 50142cc --new d1c7188 --timed --rounds 3
    # The walk by reference and the folded feature switches against the kernels before
    # them (f8e5c92): default config, every feature on, and the timed mode.
    speed_into compare-speed-bundle --old f8e5c92 --new f5ea5ee --rounds 3
    speed_into compare-speed-bundle-features --old f8e5c92 --new f5ea5ee --rounds 3 --extra "--snapshots --reconfig --disk-loss"
    speed_into compare-speed-timed --old f8e5c92 --new f5ea5ee --timed --rounds 4
    # The Numba hooks made optional and scoped (plain-Numba fall-back) against the checkout
    # before; plain Numba against the hooks in one checkout; the pinned Numba range's ends.
    speed_into compare-speed-issue26 --old e7a0650 --new 1d97054 --walks 200000 --rounds 3
    speed_into numba-plain-mode --old 1d97054 --new 1d97054 --old-env KRAFTWALK_PLAIN_NUMBA=1 \
        --walks 60000 --rounds 3
    python experiments/numba_range.py 0.61.2 0.68.1 --out "$R"
    # The vocabulary registries (ids, weights and bits derived, not hand-kept) and the checks
    # split by concern, against the checkout before them: the same walks, the same speed.
    speed_into compare-speed-vocabulary --old e7a0650 --new 3652551 --walks 200000 --rounds 3
    speed_into compare-speed-vocabulary-features --old e7a0650 --new 3652551 --walks 100000 \
        --rounds 3 --extra "--snapshots --reconfig --disk-loss"
    # The kernels and the package in layers.
    speed_into compare-speed-layers --old 5c3120c --new cbc7ae0 --walks 200000 --rounds 3
    speed_into compare-speed-layers-features --old 5c3120c --new cbc7ae0 --walks 200000 \
        --rounds 3 --extra "--snapshots --reconfig --disk-loss"
    # Kafka as released: the release switches (the default release's walks differ; with
    # 3.9's rules and pre-vote, the new side walks the old walks), the timing rules, the
    # BeginQuorumEpoch heartbeat with KAFKA-17030 and KAFKA-14145, and the fetch rules.
    speed_into compare-speed-releases --old 0d4098e --new 6598a26 --walks 200000 --rounds 3
    speed_into compare-speed-releases-same-walks --old 0d4098e --new 6598a26 \
        --new-extra "--kafka 3.9 --pre-vote" --walks 200000 --rounds 5
    speed_into compare-speed-timing-rules --old bc10991 --new 475e173 --walks 200000 --rounds 3
    speed_into compare-speed-timing-rules-timed --old bc10991 --new 475e173 --timed --rounds 3
    speed_into compare-speed-releases-2 --old 5a499c3 --new 703ee68 --walks 200000 --rounds 3
    speed_into compare-speed-releases-2-timed --old 5a499c3 --new 703ee68 --timed --rounds 3
    speed_into compare-speed-fetch-rules --old 18acdea --new e656be7 --walks 200000 --rounds 7
    speed_into compare-speed-fetch-rules-timed --old 18acdea --new e7aad99 --timed --rounds 3
    # Timed walks on the swarm's run machinery, and the ReplicasCatchUp property after it.
    speed_into compare-speed-elect-machinery --old 00164c3 --new 51e49cd --walks 200000 --rounds 5
    speed_into compare-speed-elect-machinery-elect --old 00164c3 --new 51e49cd --elect \
        --walks 6000 --workers 2 --rounds 5
    speed_into compare-speed-catch-up-timed --old 00164c3 --new 4dcfb73 --timed --rounds 5
    speed_into compare-speed-catch-up-elect --old 00164c3 --new 4dcfb73 --elect --walks 6000 \
        --workers 2 --rounds 5
    # The same walks under the checkout before a change and after it (--new pinned too).
    local T7
    T7=$(mktemp -d)  # identity_run.py's .json stays out of results/ for these three
    python experiments/identity_run.py --old e7a0650 --new 3652551 --walks 1000000 \
        --name identity-run-vocabulary --out "$T7"
    python experiments/identity_run.py --old e7a0650 --new 3652551 --walks 200000 \
        --extra "--snapshots --reconfig --disk-loss" --name identity-run-vocabulary-features --out "$T7"
    python experiments/identity_run.py --old e7a0650 --new 3652551 --walks 200000 \
        --extra "--snapshots --reconfig --disk-loss --mutation two-pending-changes" \
        --name identity-run-vocabulary-two-pending-changes --out "$T7"
    mv "$T7"/identity-run-vocabulary*.md "$R/"
    rm -rf "$T7"
    python experiments/identity_run.py --old 5c3120c --new cbc7ae0 --walks 1000000 \
        --name identity-run-layers --out "$R"
    python experiments/identity_run.py --old 5c3120c --new cbc7ae0 --walks 1000000 \
        --extra "--snapshots --reconfig --disk-loss" --name identity-run-layers-features --out "$R"
    python experiments/identity_run.py --old 5c3120c --new cbc7ae0 --walks 200000 \
        --extra "--snapshots --reconfig --disk-loss --mutation two-pending-changes" \
        --name identity-run-layers-two-pending-changes --out "$R"
    # Where a walk's time goes, by function (perf), with the calls LLVM's default threshold
    # leaves in place (the kernels themselves inline the step into three functions).
    python experiments/profile_kernel.py --seconds 20 --top 30 --inline-threshold 250 \
        --out "$R/profile-kernel.md"
    # The same walks before and after the speed levers (a million walks; violations too).
    python experiments/identity_run.py --old 45ae600 --new d1c7188 --walks 1000000 --out "$R"
    python experiments/identity_run.py --old 45ae600 --new d1c7188 --walks 200000 \
        --extra "--mutation double-vote" --name identity-run-double-vote --out "$R"
}

timed() {
    # The timed mode: KRaft's election figures at Kafka's defaults, the validation against
    # Ongaro's dissertation, the timing table, and its speed.
    rm -rf "$R/elect-leader-crash"
    kraftwalk elect --pre-vote both --observers 0 --out "$R/elect-leader-crash"
    rm -rf "$R/elect-releases"
    kraftwalk elect --kafka 3.9 --kafka 4.0 --kafka 4.0.1 --kafka 4.1 --kafka 4.2 --kafka 4.3 \
        --observers 0 --out "$R/elect-releases"
    # The overnight timing study at a fiftieth of its budget (5 minutes): election time,
    # split votes and downtime against the election timeout and the latency, 3, 5 and 7
    # voters; its summary table and the report's two plots.
    E=$(mktemp -d)
    kraftwalk sweep experiments/sweep-elect-timing.toml --walks 20000 --out "$E/elect-timing" > /dev/null
    kraftwalk report "$E/elect-timing" --out "$E/report" > /dev/null
    mkdir -p "$R/elect-timing"
    cp "$E/elect-timing/summary.md" "$R/elect-timing/summary.md"
    cp "$E/report/elect-percentiles.png" "$E/report/split-downtime.png" "$R/elect-timing/"
    rm -rf "$E"
    python experiments/ongaro.py --walks 10000 --out "$R"
    python experiments/timing_table.py
    kraftwalk bench --timed-only --cold --seconds 20 --out "$R"
}

studies() {
    # Studies (step counts; not timing-sensitive).
    python experiments/tune_swarm.py --seeds 5 --budget-steps 60000000 --out "$R"
    python experiments/disruptions.py --walks 100000 --out "$R"
    python experiments/shrink_lengths.py --out "$R"
    python experiments/shrink_timed.py --out "$R"
}

if [ $# -eq 0 ]; then set -- "${SECTIONS[@]}"; fi
for section in "$@"; do
    case " ${SECTIONS[*]} " in
        *" $section "*) ;;
        *) echo "readme_figures.sh: unknown section '$section'; sections: ${SECTIONS[*]}" >&2
           exit 2 ;;
    esac
done
for section in "$@"; do
    echo "== $section" >&2
    "${section//-/_}"
done
python experiments/update_readme.py
