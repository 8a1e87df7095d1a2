"""One sample read from the bot's metrics page (/metrics), as the tests compare them."""

from __future__ import annotations

import re


def sample(page: str, name: str, **labels: str) -> float:
    """The value of one sample of the metrics page (0 when it is not there yet)."""
    wanted = ",".join(f'{k}="{v}"' for k, v in labels.items())
    pattern = re.escape(name + (f"{{{wanted}}}" if labels else "")) + r" (\S+)"
    found = re.search(f"^{pattern}$", page, re.MULTILINE)
    return float(found.group(1)) if found else 0.0
