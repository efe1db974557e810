#!/usr/bin/env bash
# The GPU run of issue 29 (torch-cuda on third-party models), as the device tool runs it from the
# repository root with the models in models/ and onnx2torch, onnxslim, orjson, msgspec wheels in .whl/:
#   bash .device/on-device.sh && bash benchmarks/torch_gpu_run.sh
# Writes under $OUT: pytest.txt, log.txt, torch_gpu_models.json, profile_eager.json, profile_graph.json,
# coldstart_cli.json, errors.txt.
set -u
OUT=${OUT:-/tmp/torch_gpu_out}; mkdir -p "$OUT"
python3 -m pip install -q --no-index --no-deps --no-compile --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1
nvidia-smi -L
M=models/yolov8n_320n.onnx
timeout 150 python3 -m pytest -q -x -p no:randomly -m gpu tests/test_backends_torch.py tests/test_backends_gpu.py tests/test_profile_variants.py 2>&1 | tail -25 > "$OUT/pytest.txt"
cat "$OUT/pytest.txt"
{
  python3 -m trtstudio profile $M --backend torch-cuda --device 7 --iterations 5 2>&1 | tail -1
  python3 -m trtstudio profile models/silero_vad.onnx --backend torch-cuda --iterations 5 2>&1 | tail -1
  python3 -m trtstudio profile $M --backend ort --device 0 --iterations 5 2>&1 | tail -1
} > "$OUT/errors.txt"
cat "$OUT/errors.txt"
python3 -m trtstudio profile $M --backend torch-cuda --iterations 1000 --json > "$OUT/profile_eager.json" 2>/dev/null
python3 -m trtstudio profile $M --backend torch-cuda --cuda-graph --iterations 1000 --variant-rounds 20 --json > "$OUT/profile_graph.json" 2>/dev/null; python3 -m trtstudio profile $M --backend torch-cuda --cuda-graph --iterations 300 > "$OUT/profile_graph.txt" 2>&1
python3 -m trtstudio scenario coldstart $M --backend torch-cuda --json > "$OUT/coldstart_cli.json" 2>/dev/null
timeout "${BENCH_S:-330}" python3 benchmarks/torch_gpu_models.py --models models --iterations 300 --pairs "${PAIRS:-20}" \
  --cold-runs 3 2>&1 | grep -v Warning | tee "$OUT/log.txt" | tail -60
