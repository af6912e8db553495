# Sourced by the twenty-sixth session's device scripts: build_py SRC DIR LIB
# builds the Python package of source tree SRC (python/fa, python/src,
# include) into DIR against the libFARuntime in LIB, which the module finds
# first (DT_RPATH, ahead of LD_LIBRARY_PATH): two builds side by side.
build_py() {
  local suffix
  suffix=$(python3 -c "import sysconfig; print(sysconfig.get_config_var('EXT_SUFFIX'))")
  rm -rf $2 && mkdir -p $2/fa && cp -r $1/python/fa/. $2/fa/ &&
    echo '__version__ = "ab"' > $2/fa/_version.py &&
    g++ -O2 -shared -fPIC -std=c++17 $1/python/src/FaModule.cpp -I$1/include \
      -I"$(python3 -c 'import pybind11; print(pybind11.get_include())')" \
      -I"$(python3 -c "import sysconfig; print(sysconfig.get_paths()['include'])")" \
      $3/libFARuntime.so.22.1 -Wl,--disable-new-dtags,-rpath,$3 -o $2/fa/_fa$suffix
}
