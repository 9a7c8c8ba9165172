# Sourced by scripts/gpu-check.sh and scripts/gpu-python.sh on the GPU machine: puts CUDA's
# runtime compiler where cudarc looks for it. cudarc opens NVRTC by name: libnvrtc.so, or
# libnvrtc.so.MAJOR of the CUDA version it was built for (the wheel's: 12; the GPU check's:
# the machine's). A machine with only another version's libnvrtc.so.N (pip's
# nvidia-cuda-nvrtc for CUDA 13 ships no unversioned name), or with the toolkit's folder off
# the loader's path, fails to open CUDA although NVRTC is there.
#
#   nvrtc_on_path LINK_DIR
#
# Where the loader finds no libnvrtc.so, looks in CARTFUSE_NVRTC_SEARCH (colon-separated
# folders; default: the CUDA toolkit's and python3's nvidia packages) and puts the first
# folder holding it first on LD_LIBRARY_PATH, or, where a folder holds only libnvrtc.so.N,
# links the newest as LINK_DIR/libnvrtc.so and puts both folders first. Prints what it did;
# returns 1 when it found no NVRTC.

nvrtc_search_dirs() {
  if [ -n "${CARTFUSE_NVRTC_SEARCH:-}" ]; then
    tr ':' '\n' <<<"$CARTFUSE_NVRTC_SEARCH"
    return
  fi
  echo /usr/local/cuda/lib64
  echo /usr/local/cuda/targets/x86_64-linux/lib
  local nvidia
  nvidia="$(python3 -c 'import nvidia; print("\n".join(nvidia.__path__))' 2>/dev/null)" || return 0
  [ -n "$nvidia" ] || return 0
  find $nvidia -name 'libnvrtc.so*' -printf '%h\n' 2>/dev/null | sort -u
}

nvrtc_on_path() {
  local link_dir="$1" dir newest
  local path_dirs=()
  IFS=: read -r -a path_dirs <<<"${LD_LIBRARY_PATH:-}"
  for dir in "${path_dirs[@]}"; do
    if [ -n "$dir" ] && [ -e "$dir/libnvrtc.so" ]; then
      echo "nvrtc: $dir/libnvrtc.so (on LD_LIBRARY_PATH)"
      return 0
    fi
  done
  if [ -z "${CARTFUSE_NVRTC_SEARCH:-}" ] && ldconfig -p 2>/dev/null | grep -q 'libnvrtc\.so '; then
    echo "nvrtc: libnvrtc.so (in the loader's cache)"
    return 0
  fi
  while IFS= read -r dir; do
    [ -d "$dir" ] || continue
    if [ -e "$dir/libnvrtc.so" ]; then
      export LD_LIBRARY_PATH="$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
      echo "nvrtc: $dir/libnvrtc.so (its folder put first on LD_LIBRARY_PATH)"
      return 0
    fi
    newest="$(find "$dir" -maxdepth 1 -name 'libnvrtc.so.[0-9]*' ! -name '*builtins*' -printf '%f\n' \
      2>/dev/null | sort -V | tail -1)"
    if [ -n "$newest" ]; then
      mkdir -p "$link_dir" && ln -sf "$dir/$newest" "$link_dir/libnvrtc.so" || return 1
      export LD_LIBRARY_PATH="$link_dir:$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
      echo "nvrtc: only $dir/$newest: linked as $link_dir/libnvrtc.so for this run"
      return 0
    fi
  done < <(nvrtc_search_dirs)
  echo "nvrtc: no libnvrtc.so found (LD_LIBRARY_PATH, the loader's cache, $(nvrtc_search_dirs | paste -sd ' '))"
  return 1
}
