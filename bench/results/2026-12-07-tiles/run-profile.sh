# Issue 18: the 2026-12-06 profile's command again (an Nsight Compute profile, full set, of one
# launch of the 1B's prefill step), on the kernel of ff74cac; python3 ../2026-12-06-profile/sass_loops.py
# reads its source page per loop.
bash bench/results/2026-12-06-profile/run.sh
