# Issue 18: bench.py's prefill row for a 512-token prompt on this change's 1B kernel, against
# torch.compile + CUDA graph and eager in the same run (run-bench.sh's 512- and 2048-token rows
# did not finish inside its time budget: torch.compile's autotuning of each prompt length).
CHECKS="env benchmark" BENCH_MODELS="llama-3.2-1b" BENCH_PREFILL="512" BENCH_SKIP_DECODE=1 \
  GPU_CHECK_BUDGET_S=300 bash scripts/gpu-check.sh
