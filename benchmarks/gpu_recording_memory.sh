#!/usr/bin/env bash
# The GPU run of issues 48 (torch-cuda per-layer recording cost, verdict, op types) and 49 (memory
# --measure), from the repository root on a CUDA machine with torch, with onnx2torch, onnxslim,
# orjson, msgspec and cupti-python wheels in .whl/ (python3 -m pip download ... -d .whl). Held-out
# models: the onnx wheel's light zoo. Writes under $OUT: pytest.txt, shufflenet.txt, recording.jsonl,
# memory.jsonl.
set -u
OUT=${OUT:-/tmp/gpu_out}; mkdir -p "$OUT"
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1
nvidia-smi -L
L=$(python3 -c "import onnx, os; print(os.path.dirname(onnx.__file__))")/backend/test/data/light
M=/tmp/light; mkdir -p $M
cp $L/light_{squeezenet,shufflenet,densenet121,inception_v1,bvlc_alexnet,zfnet512,resnet50}.onnx $M/
timeout 240 python3 -m pytest -q -p no:randomly -p no:cacheprovider -m gpu tests/test_backends_torch.py \
  tests/test_memory_measure.py 2>&1 | tail -15 | tee "$OUT/pytest.txt"
python3 -m trtstudio profile $M/light_shufflenet.onnx --backend torch-cuda --per-layer --iterations 300 \
  > "$OUT/shufflenet.txt" 2>&1; tail -30 "$OUT/shufflenet.txt"
timeout "${MEM_S:-200}" python3 benchmarks/memory_measure.py $M/light_resnet50.onnx $M/light_densenet121.onnx \
  $M/light_inception_v1.onnx 2>&1 | tee "$OUT/memory.jsonl"
mkdir -p /tmp/rec; cp $M/light_{squeezenet,shufflenet,densenet121,inception_v1,bvlc_alexnet,zfnet512}.onnx /tmp/rec/
timeout "${REC_S:-300}" python3 benchmarks/torch_recording.py --models /tmp/rec --runs 3 --iterations 300 2>&1 \
  | tee "$OUT/recording.jsonl"
