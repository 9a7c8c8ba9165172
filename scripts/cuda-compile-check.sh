#!/usr/bin/env bash
# Every kernel the device suites compile, as CUDA C++, compiled without a GPU (issue 51).
set -uo pipefail

usage() {
  cat <<'EOF'
usage: bash scripts/cuda-compile-check.sh [--filter "TEST_FILTER ..."] [--keep DIR] [--binary PATH]
       bash scripts/cuda-compile-check.sh --which-clang   print the clang++ it would use

Runs the integration suites on wgpu (lavapipe where there is no GPU), and the CLI built
beside them through `reproduce --quick` on wgpu, with CARTFUSE_CUDA_SOURCES set: every
kernel they compile, cartfuse's and burn's, is also translated by cubecl-cpp's CUDA
compiler as cubecl-cuda would hand it to NVRTC on an sm_90 GPU
(fusion/src/cube/cuda_sources.rs). Then each source is compiled to device LLVM IR by
clang's CUDA front end (clang 14: `apt-get install clang-14`; no CUDA toolkit needed, a
stub header stands in for cuda_runtime.h). What NVRTC would refuse (a type error, an
undeclared function, a reinterpreted literal) shows here without a GPU; what only NVRTC
checks (its own headers and options) does not, and the kernels are shaped by the wgpu
device's properties. About 6 minutes on two cores after the build.

  --filter   test filters for the integration binary (default: "wgpu:: device_learner::",
             the suites that launch kernels on wgpu alone; those that compare wgpu with
             CUDA need a CUDA device in this build)
  --keep     write the sources and clang's messages to DIR (default: a temporary directory,
             removed at the end)
  --binary   the integration-test binary to run, built with --features cuda (for example
             the one `scripts/gpu-check.sh --build` packs); default: built here with
             `cargo test --profile release-tests --features cuda --test integration --no-run`

CARTFUSE_CLANG names the clang++ to use (default: clang++-14, else clang++).

Exit status: 0 every source compiled; 1 a source failed, the CUDA compiler refused a kernel,
or no source was written; 2 bad arguments or a missing tool.
EOF
}

die() { echo "cuda-compile-check: $1" >&2; exit 2; }

repo="$(cd "$(dirname "$0")/.." && pwd)"
filter="wgpu:: device_learner::"
keep=""
binary=""
which_clang=0
while [ $# -gt 0 ]; do
  case "$1" in
    -h|--help) usage; exit 0 ;;
    --which-clang) which_clang=1 ;;
    --filter|--keep|--binary)
      [ $# -ge 2 ] || die "$1 needs a value"
      case "$1" in
        --filter) filter="$2" ;;
        --keep) keep="$2" ;;
        --binary) binary="$2" ;;
      esac
      shift ;;
    *) die "unknown argument $1 (see --help)" ;;
  esac
  shift
done

clang=""
for candidate in ${CARTFUSE_CLANG:-clang++-14 clang++}; do
  if command -v "$candidate" >/dev/null 2>&1; then clang="$candidate"; break; fi
done
[ -n "$clang" ] || die "no clang++ found${CARTFUSE_CLANG:+ (CARTFUSE_CLANG=$CARTFUSE_CLANG)} (Debian/Ubuntu: sudo apt-get install clang-14)"
if [ "$which_clang" = 1 ]; then echo "$clang"; exit 0; fi

if [ -n "$keep" ]; then
  mkdir -p "$keep" || die "cannot create $keep"
  work="$(cd "$keep" && pwd)"
else
  work="$(mktemp -d)"
  trap 'rm -rf "$work"' EXIT
fi
sources="$work/sources"
rm -rf "$sources" && mkdir -p "$sources" "$work/include"

cd "$repo" || exit 2
if [ -z "$binary" ]; then
  build_args=(--profile release-tests --features cuda --test integration --no-run)
  echo "== building the integration tests with --features cuda" >&2
  cargo test "${build_args[@]}" >&2 || die "the build failed"
  binary="$(cargo test "${build_args[@]}" --message-format=json 2>/dev/null \
    | grep -o '"executable":"[^"]*integration[^"]*"' | tail -1 | cut -d'"' -f4)"
  [ -n "$binary" ] || die "cargo did not name the integration-test binary"
fi
[ -x "$binary" ] || die "$binary is not an executable integration-test binary"

echo "== running $binary $filter (sources into $sources)" >&2
# shellcheck disable=SC2086 # the filters are separate arguments
CARTFUSE_CUDA_SOURCES="$sources" XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-/tmp/xdg}" \
  "$binary" $filter --test-threads=1 >"$work/tests.log" 2>&1
tests_status=$?
grep -E "^test result:" "$work/tests.log" >&2
[ "$tests_status" = 0 ] || echo "cuda-compile-check: some tests failed (their log: $work/tests.log); their kernels are checked all the same" >&2

# The study's own kernels (the roofline's copy and FLOP kernels, the dispatch tax's) run in
# `reproduce` alone: its quick run on wgpu, with the CLI built beside the test binary.
cli=""
for candidate in "$(dirname "$binary")/cartfuse" "$(dirname "$binary")/../cartfuse"; do
  if [ -x "$candidate" ]; then cli="$candidate"; break; fi
done
if [ -n "$cli" ]; then
  echo "== running $cli --device wgpu reproduce --quick" >&2
  CARTFUSE_CUDA_SOURCES="$sources" XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-/tmp/xdg}" \
    "$cli" --device wgpu reproduce --quick --out "$work/reproduce" >"$work/reproduce.log" 2>&1 \
    || echo "cuda-compile-check: reproduce failed (its log: $work/reproduce.log); its kernels are checked all the same" >&2
else
  echo "cuda-compile-check: no cartfuse CLI beside $binary: the study's kernels are not checked" >&2
fi

# Stands in for the CUDA toolkit's headers: clang's own CUDA builtins and device functions,
# and the vector types (uint3, float4, make_uint3, ...) that CUDA's headers declare.
mkdir -p "$work/include/crt"
: >"$work/include/crt/sm_70_rt.hpp"
{
  cat <<'EOF'
#pragma once
#define CUDA_VERSION 12080
#include <stddef.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
typedef uint32_t cuuint32_t;
typedef uint64_t cuuint64_t;
#define __host__ __attribute__((host))
#define __device__ __attribute__((device))
#define __global__ __attribute__((global))
#define __shared__ __attribute__((shared))
#define __constant__ __attribute__((constant))
#define __forceinline__ __inline__ __attribute__((always_inline))
#define __noinline__ __attribute__((noinline))
#define __grid_constant__
#define __align__(n) __attribute__((aligned(n)))
#define __launch_bounds__(...) __attribute__((launch_bounds(__VA_ARGS__)))
#include <__clang_cuda_builtin_vars.h>
EOF
  for spec in "char:char" "uchar:unsigned char" "short:short" "ushort:unsigned short" \
      "int:int" "uint:unsigned int" "long:long" "ulong:unsigned long" "longlong:long long" \
      "ulonglong:unsigned long long" "float:float" "double:double"; do
    name="${spec%%:*}"; base="${spec#*:}"
    echo "struct ${name}1 { $base x; };"
    echo "struct __align__(2 * sizeof($base)) ${name}2 { $base x, y; };"
    echo "struct ${name}3 { $base x, y, z; };"
    echo "struct __align__(4 * sizeof($base)) ${name}4 { $base x, y, z, w; };"
    echo "__host__ __device__ inline ${name}1 make_${name}1($base x) { return {x}; }"
    echo "__host__ __device__ inline ${name}2 make_${name}2($base x, $base y) { return {x, y}; }"
    echo "__host__ __device__ inline ${name}3 make_${name}3($base x, $base y, $base z) { return {x, y, z}; }"
    echo "__host__ __device__ inline ${name}4 make_${name}4($base x, $base y, $base z, $base w) { return {x, y, z, w}; }"
  done
  cat <<'EOF'
struct dim3 {
  unsigned int x, y, z;
  __host__ __device__ dim3(unsigned int x = 1, unsigned int y = 1, unsigned int z = 1) : x(x), y(y), z(z) {}
  __host__ __device__ dim3(uint3 v) : x(v.x), y(v.y), z(v.z) {}
  __host__ __device__ operator uint3() const { return {x, y, z}; }
};
#include <__clang_cuda_libdevice_declares.h>
#include <__clang_cuda_device_functions.h>
#include <__clang_cuda_math.h>
#include <__clang_cuda_intrinsics.h>
__device__ inline float atomicAdd(float *a, float v) { return __fAtomicAdd(a, v); }
__device__ inline double atomicAdd(double *a, double v) { return __dAtomicAdd(a, v); }
__device__ inline unsigned long long atomicAdd(unsigned long long *a, unsigned long long v) { return __ullAtomicAdd(a, v); }
__device__ inline unsigned long long atomicCAS(unsigned long long *a, unsigned long long c, unsigned long long v) { return __ullAtomicCAS(a, c, v); }
EOF
  for op in Add Exch Min Max And Or Xor; do
    echo "__device__ inline int atomic$op(int *a, int v) { return __iAtomic$op(a, v); }"
    echo "__device__ inline unsigned int atomic$op(unsigned int *a, unsigned int v) { return __uAtomic$op(a, v); }"
  done
  echo "__device__ inline int atomicCAS(int *a, int c, int v) { return __iAtomicCAS(a, c, v); }"
  echo "__device__ inline unsigned int atomicCAS(unsigned int *a, unsigned int c, unsigned int v) { return __uAtomicCAS(a, c, v); }"
} >"$work/include/cuda_runtime.h"

refused=$(find "$sources" -name '*.error.txt' | wc -l)
total=$(find "$sources" -name '*.cu' | wc -l)
[ "$total" -gt 0 ] || { echo "cuda-compile-check: no CUDA source was written" >&2; exit 1; }
echo "== compiling $total sources with $clang (sm_80 device code, to LLVM IR)" >&2
compile_one() {
  local cu="$1" clang="$2" include="$3"
  if ! "$clang" -x cuda --cuda-device-only --cuda-gpu-arch=sm_80 -nocudainc -nocudalib \
      -std=c++17 -O1 -ffp-contract=off -Wno-unknown-cuda-version -I "$include" -emit-llvm -S -o /dev/null "$cu" \
      >"$cu.log" 2>&1; then
    echo "$cu"
  fi
}
export -f compile_one
failed_list="$work/failed.txt"
find "$sources" -name '*.cu' -print0 \
  | xargs -0 -P "$(nproc)" -I{} bash -c 'compile_one "$1" "$2" "$3"' _ {} "$clang" "$work/include" \
  >"$failed_list"
failed=$(wc -l <"$failed_list")

for f in $(head -3 "$failed_list"); do
  echo "--- $(basename "$f"):" >&2
  grep -m 5 "error" "$f.log" >&2
done
for f in $(find "$sources" -name '*.error.txt' | head -3); do
  echo "--- $(basename "$f") (refused by cubecl-cpp):" >&2
  head -5 "$f" >&2
done
echo "CUDA sources: $total written, $((total - failed)) compiled, $failed failed; $refused kernels refused by the CUDA compiler"
[ "$failed" = 0 ] && [ "$refused" = 0 ]
