"""A named group of validation checks: counts plus one line per failure."""
from __future__ import annotations

MAX_SHOWN = 25   # failures printed per group; the count is always exact


class Group:
    def __init__(self, title: str, noun: str = "checks", detail: str = ""):
        self.title, self.noun, self.detail = title, noun, detail
        self.ok, self.total, self.failures, self.notes = 0, 0, [], []

    def check(self, good: bool, why: str = "") -> bool:
        self.total += 1
        if good:
            self.ok += 1
        else:
            self.failures.append(why)
        return good

    def fail(self, why: str) -> None:
        self.check(False, why)

    def note(self, text: str) -> None:
        """A line that is printed but decides nothing (what was not checked, and why)."""
        self.notes.append(text)

    def item(self, reasons: list, where: str) -> bool:
        """One check that fails with every reason found for it."""
        return self.check(not reasons, f"{where}: {'; '.join(reasons)}")

    @property
    def passed(self) -> bool:
        return self.ok == self.total and not self.failures

    def lines(self) -> list:
        head = f"{self.title}: {self.detail}{self.ok}/{self.total} {self.noun} ok"
        out = [head if self.passed else head + "  FAILED"]
        out += [f"  NOTE {text}" for text in self.notes]
        out += [f"  FAIL {why}" for why in self.failures[:MAX_SHOWN]]
        if len(self.failures) > MAX_SHOWN:
            out.append(f"  ... and {len(self.failures) - MAX_SHOWN} more failures")
        return out
