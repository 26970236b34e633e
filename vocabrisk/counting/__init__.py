from vocabrisk.counting.counter import TokenCounter
from vocabrisk.counting.counts import TokenCounts
from vocabrisk.counting.policy import SpecialTokenPolicy

__all__ = ["SpecialTokenPolicy", "TokenCounter", "TokenCounts"]
