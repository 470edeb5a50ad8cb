"""Stand-in config types for PhoneAdapter (see ../__init__.py)."""
from dataclasses import dataclass, field


class Platform(str):
    def __new__(cls, value):
        return str.__new__(cls, value)


@dataclass
class PlatformConfig:
    extra: dict = field(default_factory=dict)
