#!/bin/bash
# Saves the JSON answers of every bundled example (simulate in event, analytical and flow mode on
# several clusters and world sizes) and of `orrery collective` sweeps, one file per run, so that
# a change to the network model can be checked to leave today's answers as they are:
#
#   scripts/network-snapshot.sh build/orrery /tmp/before      # before the change
#   scripts/network-snapshot.sh build/orrery /tmp/after       # after it
#   scripts/compare-snapshots.py /tmp/before /tmp/after       # equal, or to 1e-9 relative
#
# Set SNAPSHOT_MILLION=1 to add the million-GPU runs of the SimAI seeds (minutes before
# the alike-group kinds of docs/network.md); SNAPSHOT_FILTER=REGEX runs only the cases whose name matches.
set -u
bin=${1:?usage: network-snapshot.sh ORRERY_BINARY OUTPUT_DIR}
out=${2:?usage: network-snapshot.sh ORRERY_BINARY OUTPUT_DIR}
root=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out"
filter=${SNAPSHOT_FILTER:-.}

run() {  # run NAME ARGS...: stdout to NAME.json, exit status and stderr to NAME.err
  local name=$1
  shift
  [[ $name =~ $filter ]] || return 0
  "$bin" "$@" >"$out/$name.json" 2>"$out/$name.stderr"
  echo "rc=$?" >"$out/$name.err"
  cat "$out/$name.stderr" >>"$out/$name.err"
  rm -f "$out/$name.stderr"
}

gpt=$root/examples/simai/gpt_tp8_pp16_ga16_1024gpus.txt
moe=$root/examples/simai/moe_tp8_ep4_pp4_vpp8_128gpus.txt
neusight=$root/examples/neusight/gpt2_large_block_b16_s1024.txt
torchviz=$root/examples/torchviz/moe_qformer_b4_s45.dot
graph_config=$root/examples/torchviz/moe_qformer.yaml
dfmodel=$root/examples/dfmodel/gpt1t_pp128_dp32_4096chips.txt

for cluster in dgx-a100 hgx-h100 simai-default; do
  for seed in gpt moe; do
    file=${!seed}
    for mode in event analytical flow; do
      run "simai.$seed.$cluster.$mode.default" simulate "$file" --cluster $cluster --mode $mode --json
    done
    for gpus in 1024 4096 65536; do
      for mode in event analytical; do
        run "simai.$seed.$cluster.$mode.g$gpus" simulate "$file" --cluster $cluster --mode $mode \
          --gpus $gpus --json
      done
    done
    run "simai.$seed.$cluster.flow.g4096" simulate "$file" --cluster $cluster --mode flow \
      --gpus 4096 --json
    if [[ ${SNAPSHOT_MILLION:-0} == 1 ]]; then
      for mode in event analytical; do
        run "simai.$seed.$cluster.$mode.g1048576" simulate "$file" --cluster $cluster \
          --mode $mode --gpus 1048576 --json
      done
    fi
  done
  for mode in event analytical flow; do
    run "neusight.$cluster.$mode" simulate "$neusight" --cluster $cluster --mode $mode --json
    run "neusight.$cluster.$mode.dp64" simulate "$neusight" --cluster $cluster --mode $mode \
      --dp 64 --json
    run "torchviz.$cluster.$mode" simulate "$torchviz" --graph-config "$graph_config" \
      --cluster $cluster --mode $mode --json
    run "torchviz.$cluster.$mode.dp16.ep2" simulate "$torchviz" --graph-config "$graph_config" \
      --cluster $cluster --mode $mode --dp 16 --ep 2 --json
  done
  for mode in event analytical; do
    run "dfmodel.$cluster.$mode" simulate "$dfmodel" --cluster $cluster --mode $mode --json
  done
done
run "dfmodel.default" simulate "$dfmodel" --json

# Other networks (mesh and torus dimensions, NVL72 domains, Ethernet rails), placements that make
# groups lie unalike, and forced algorithms.
for cluster in tpu-v4 mi300x gb200-nvl72 hgx-h100-roce400 hgx-b200; do
  for seed in gpt moe; do
    for mode in event analytical; do
      run "simai.$seed.$cluster.$mode.default" simulate "${!seed}" --cluster $cluster --mode $mode \
        --json
      run "simai.$seed.$cluster.$mode.g4096" simulate "${!seed}" --cluster $cluster --mode $mode \
        --gpus 4096 --json
    done
  done
done
for placement in dp,tp,ep,pp pp,dp,ep,tp ep,tp,pp,dp; do
  for cluster in dgx-a100 tpu-v4; do
    for seed in gpt moe; do
      run "simai.$seed.$cluster.placement-$placement" simulate "${!seed}" --cluster $cluster \
        --placement $placement --gpus 2048 --json
    done
  done
done
for algo in ring hierarchical tree nvls halving-doubling direct; do
  for cluster in hgx-h100 tpu-v4 mi300x; do
    for seed in gpt moe; do
      run "simai.$seed.$cluster.algo-$algo" simulate "${!seed}" --cluster $cluster --algo $algo \
        --gpus 1024 --json
    done
  done
done
run "simai.moe.dgx-a100.gps12" simulate "$moe" --cluster dgx-a100 --gpus-per-server 12 --json
run "simai.moe.dgx-a100.nics3" simulate "$moe" --cluster dgx-a100 --nics-per-server 3 --json
run "simai.gpt.dgx-a100.nics4.g65536" simulate "$gpt" --cluster dgx-a100 --nics-per-server 4 \
  --gpus 65536 --json

# Plans generated from models (context parallelism, the distributed optimizer).
run "model.gpt3.dgx-a100" simulate --model gpt3-175b --cluster dgx-a100 --gpus 1536 --tp 8 \
  --pp 16 --gbs 1536 --json
run "model.gpt3.dgx-a100.vpp" simulate --model gpt3-175b --cluster dgx-a100 --gpus 64 --tp 8 \
  --pp 8 --vpp 3 --gbs 64 --recompute full --attention unfused --dtype fp16 --json
run "model.llama405.hgx-h100" simulate --model llama3.1-405b --cluster hgx-h100 --gpus 16384 \
  --tp 8 --pp 16 --seq 8192 --gbs 2048 --json
run "model.llama405.hgx-h100.cp" simulate --model llama3.1-405b --cluster hgx-h100 --gpus 4096 \
  --tp 8 --cp 2 --pp 16 --seq 8192 --gbs 512 --distributed-optimizer --json
run "model.llama405.hgx-h100.cp.analytical" simulate --model llama3.1-405b --cluster hgx-h100 \
  --gpus 4096 --tp 8 --cp 2 --pp 16 --seq 8192 --gbs 512 --distributed-optimizer \
  --mode analytical --json

# Collectives: every op, sizes from 1 KiB to 4 GiB, on 8 to 4,096 ranks.
for cluster in dgx-a100 hgx-h100; do
  for ranks in 8 64 1024 4096; do
    for op in allreduce allgather reducescatter alltoall broadcast reduce sendrecv; do
      run "collective.$cluster.$ranks.$op" collective --op $op -b 1KiB -e 4GiB -f 8 \
        --ranks $ranks --cluster $cluster --json
    done
  done
done
for cluster in tpu-v4 mi300x simai-default; do
  for ranks in 12 64 1024; do
    for op in allreduce alltoall; do
      run "collective.$cluster.$ranks.$op" collective --op $op -b 1KiB -e 1GiB -f 32 \
        --ranks $ranks --cluster $cluster --json
    done
  done
done
