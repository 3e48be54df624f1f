"""The concierge's venue database: `db.json`, ten hotels and eleven restaurants of an invented Cambridge.

Names follow the style of MultiWOZ's Cambridge database; addresses, phone numbers and every other detail
are invented for the demo. The file is a JSON list of objects, each with a `name`, so it doubles as the
target's entity catalog (`[targets.concierge] entities = "demo_agents/concierge/db.json"`).

Search is exact matching on the constraints given (lower-case), in file order: deterministic, so a
scenario's outcome never depends on ranking.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import BaseModel, ConfigDict, TypeAdapter

DB_PATH = Path(__file__).parent / "db.json"
DOMAINS = ("hotel", "restaurant")
# The constraints a search filters on, per domain; other slots (book*) do not narrow a search.
SEARCH_SLOTS: Mapping[str, tuple[str, ...]] = {
    "hotel": ("name", "area", "pricerange", "type"),
    "restaurant": ("name", "area", "pricerange", "food"),
}


class _Row(BaseModel):
    model_config = ConfigDict(extra="allow", frozen=True)

    domain: str
    name: str
    area: str
    pricerange: str
    address: str
    postcode: str
    phone: str


@dataclass(frozen=True, kw_only=True)
class Venue:
    """One hotel or restaurant; `details` holds the domain's own fields (type, stars, food)."""

    domain: str
    name: str
    area: str
    pricerange: str
    address: str
    postcode: str
    phone: str
    details: Mapping[str, str] = field(default_factory=dict)

    def value(self, slot: str) -> str:
        """The venue's value for a slot, lower-case; '' when it has none."""
        own = {"name": self.name, "area": self.area, "pricerange": self.pricerange}
        return str(own.get(slot, self.details.get(slot, ""))).lower()

    def render(self) -> str:
        """The line a tool returns: name first, then what a customer may ask for."""
        extra = ", ".join(f"{k} {v}" for k, v in self.details.items())
        return (
            f"{self.name} | {self.area} | {self.pricerange} | {extra} | address {self.address}, "
            f"{self.postcode} | phone {self.phone}"
        )


@functools.cache
def venues() -> tuple[Venue, ...]:
    """Every venue in db.json, in file order (read once per process)."""
    rows = TypeAdapter(list[_Row]).validate_json(DB_PATH.read_bytes())
    return tuple(
        Venue(
            domain=row.domain,
            name=row.name,
            area=row.area,
            pricerange=row.pricerange,
            address=row.address,
            postcode=row.postcode,
            phone=row.phone,
            details={k: str(v) for k, v in (row.model_extra or {}).items()},
        )
        for row in rows
    )


def search(domain: str, constraints: Mapping[str, str]) -> list[Venue]:
    """Venues of the domain matching every searchable constraint; unknown slots are ignored."""
    wanted = {k: v.lower() for k, v in constraints.items() if k in SEARCH_SLOTS.get(domain, ()) and v}
    return [v for v in venues() if v.domain == domain and all(v.value(k) == x for k, x in wanted.items())]


def find(name: str, domain: str | None = None) -> Venue | None:
    """The venue with this name (case-insensitive), optionally only in one domain."""
    key = name.strip().lower()
    return next(
        (v for v in venues() if v.name.lower() == key and domain in (None, v.domain)),
        None,
    )


def booking_reference(*parts: str) -> str:
    """An 8-character reference derived from the booking's details: the same booking, the same one."""
    return hashlib.sha256("|".join(parts).encode()).hexdigest()[:8].upper()
