"""Prints the shell block of README.md that follows a `<!-- ci: NAME -->` marker, so CI runs it as written."""

import re
import sys

name = sys.argv[1]
path = sys.argv[2] if len(sys.argv) > 2 else "README.md"
with open(path, encoding="utf-8") as handle:
    text = handle.read()
match = re.search(rf"<!-- ci: {re.escape(name)} -->\s*```bash\n(.*?)```", text, re.S)
if match is None:
    sys.exit(f"{path} has no ```bash block after <!-- ci: {name} -->")
print(match.group(1), end="")
