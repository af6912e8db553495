"""Reads PTX on stdin; for each kernel (.entry), whether griddepcontrol.wait
comes before its first instruction that touches memory other than its
parameters. Prints "entries N, waiting first M" and the kernels that do
not wait first, one per line."""
import re
import sys

entries, waiting, late = 0, 0, []
name = None
for line in sys.stdin:
    entry = re.match(r"\.(?:visible )?\.entry (\w+)\(", line.strip())
    if entry:
        name, entries = entry.group(1), entries + 1
        continue
    if name is None:
        continue
    op = line.strip().split(" ")[0].split("\t")[0]
    if op.startswith("griddepcontrol.wait"):
        waiting += 1
        name = None
    elif re.match(r"(ld|st|cp|red|atom|mbarrier)\.", op) \
            and not op.startswith("ld.param"):
        late.append(name)
        name = None
print(f"entries {entries}, waiting first {waiting}")
for kernel in late:
    print(f"late: {kernel}")
