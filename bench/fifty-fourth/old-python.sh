# Sourced by parts.sh and w128.sh after device_python: /tmp/fa-old, a copy
# of $PY_DIR's package with head-python/'s api.py and torch_ops.py (27ecdcc's,
# made here by git show 27ecdcc:python/fa/{api,torch_ops}.py; not
# committed) over it.
old_python() {
  rm -rf /tmp/fa-old && cp -r "$PY_DIR" /tmp/fa-old &&
    cp bench/fifty-fourth/head-python/*.py /tmp/fa-old/fa/
}
