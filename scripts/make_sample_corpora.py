"""Generate vocabrisk's sample corpora and the demo model's reference text.

Every word here was written for this project: the corpora are assembled procedurally
from the vocabularies and templates below, so the repository ships no third-party
text. A fixed seed per output makes every run byte-identical.

    python scripts/make_sample_corpora.py            # writes sample_corpora/ and
                                                     # vocabrisk/demo_model/reference.txt.gz

`build_demo_model.py` imports `pretraining_documents` and `reference_text` from here, so
the demo model is pretrained on the same distribution the samples are drawn from.
"""

from __future__ import annotations

import argparse
import csv
import gzip
import io
import json
import random
from collections.abc import Callable
from datetime import date, timedelta
from pathlib import Path
from string import Template

REPO_ROOT = Path(__file__).resolve().parents[1]
SAMPLE_SEED = 2026
REFERENCE_SEED = 7919
REFERENCE_BYTES = 150_000

# --------------------------------------------------------------------------- English

NAMES = (
    "Mara", "Tobias", "Ines", "Oren", "Priya", "Kwame", "Lucia", "Felix", "Hana",
    "Ravi", "Ada", "Jonah", "Selma", "Teodor", "Wren", "Niamh", "Aziz", "Greta",
    "Malik", "Yara", "Bruno", "Signe", "Emeka", "Lotte",
)  # fmt: skip
PLACES = (
    "the harbour town", "a quiet valley", "the old mill", "a crowded market",
    "the lighthouse on the northern cape", "the edge of the pine forest",
    "the university library", "a mountain village", "the night train to the coast",
    "a small bakery on Elm Street", "the river delta", "an empty greenhouse",
    "the attic of the apartment block", "the cabin of a ferry crossing the bay", "the school workshop",
)  # fmt: skip
OBJECTS = (
    "a brass compass", "a torn map", "a wooden box", "a letter with no stamp",
    "a silver key", "an old radio", "a jar of honey", "a notebook full of sketches",
    "a broken umbrella", "a paper lantern", "a bicycle bell", "a photograph of a stranger",
    "a tin of buttons", "a pocket watch that ran backwards", "a seed packet",
)  # fmt: skip
TRAITS = (
    "careful", "restless", "curious", "stubborn", "gentle", "tired", "cheerful",
    "anxious", "patient", "clever", "shy", "impatient", "generous", "quiet",
)  # fmt: skip
OPENINGS = (
    "Early one morning", "Late in the autumn", "On the first warm day of spring",
    "Just before midnight", "After a long week of rain", "On a grey Tuesday",
    "In the middle of a heatwave", "On the last day of the school year",
)  # fmt: skip
SCENERY = (
    "The wind carried the smell of salt and diesel.",
    "Rain drummed on the tin roof and the gutters overflowed.",
    "Somewhere a dog barked twice and then thought better of it.",
    "The streetlights flickered on one by one, as if counting.",
    "Frost had drawn ferns across every window.",
    "Gulls argued over a crust of bread near the water.",
    "The air was thick with pollen and the hum of bees.",
    "A tram rattled past, nearly empty, its bell ringing for no one.",
)  # fmt: skip
FEELINGS = (
    "a little afraid", "strangely calm", "more awake than ever", "close to laughing",
    "homesick for a place they had never seen", "certain they were being watched",
    "lighter, as if a knot had come loose",
)  # fmt: skip
SPEECH = (
    "Where did this come from?", "We should put it back before anyone notices.",
    "I have seen this before, but I cannot remember where.",
    "Give me a day and I will find out who it belongs to.",
    "Some things are better left unopened.", "Do you hear that ticking?",
    "If we hurry, we can still catch the last bus.",
)  # fmt: skip
STORY_MIDDLE = (
    "$name had always been $trait, and today was no exception.",
    "$name turned $object over in both hands, looking for a name or a date.",
    "Nobody in $place seemed to notice, or if they did, they kept it to themselves.",
    '"$speech" $name said, half to $friend and half to the empty street.',
    '$friend shrugged. "$speech"',
    "For a while neither of them spoke, and $name felt $feeling.",
    "They followed the path until it ended at a gate that had rusted open.",
    "By noon the mystery had grown rather than shrunk.",
    "$friend, who was far more $trait than $name, wanted to ask for help.",
    "It took most of the afternoon to work out where $object had come from.",
)  # fmt: skip
STORY_ENDINGS = (
    "In the end $name kept $object on the windowsill, where it caught the light.",
    "They never learned who had left it, and after a while they stopped asking.",
    "$friend wrote the whole thing down that night, so that nobody could say it "
    "had not happened.",
    "When they came back the next week, $place looked exactly as it always had.",
    "$name gave $object to the first child who asked for it, and walked home whistling.",
)  # fmt: skip
EXPLAINERS = {
    "Why bread rises": (
        "Yeast is a living fungus that eats the sugars in flour and breathes out carbon dioxide.",
        "Kneading stretches gluten into an elastic net that traps those tiny bubbles.",
        "A warm kitchen speeds the yeast up, while a cold one slows it down without harming it.",
        "In the oven the trapped gas expands, the water turns to steam, and the crust sets around the swollen crumb.",
        "Salt tightens the gluten and slows fermentation, which is why bakers never leave it out.",
    ),
    "How tides work": (
        "The moon pulls a little harder on the side of the earth that faces it than on the far side.",
        "That difference stretches the oceans into two bulges, one toward the moon and one away from it.",
        "As the earth turns beneath the bulges, most coasts see two high tides a day.",
        "When the sun and moon line up, their pulls add together and the tides grow larger.",
        "The shape of a bay can funnel the water and turn a modest tide into a dramatic one.",
    ),
    "What compound interest does": (
        "Interest that is added to a balance starts earning interest of its own.",
        "Over a few years the effect is small, but over decades it dominates everything else.",
        "A rough rule says that money doubles after about seventy divided by the yearly rate in percent years.",
        "The same arithmetic works against a borrower who lets a debt grow unpaid.",
        "Starting early matters more than starting big, because time is the exponent.",
    ),
    "Why a bicycle stays upright": (
        "A moving bicycle steers itself back under its rider when it starts to lean.",
        "The front wheel touches the ground behind the line of the steering axis, so a "
        "lean turns the wheel into the fall.",
        "Riders make the same correction without thinking, many times each second.",
        "At walking pace the corrections are too slow, which is why slow riding feels wobbly.",
        "Engineers have built riderless bicycles that balance on their own at speed.",
    ),
    "How a refrigerator moves heat": (
        "A refrigerator does not make cold; it carries heat from the inside to the outside.",
        "A fluid evaporates in the coils inside the cabinet and absorbs heat as it does.",
        "A compressor squeezes the vapour, which makes it hotter than the kitchen air.",
        "The hot vapour gives up its heat through the grille at the back and condenses again.",
        "Leaving the door open only warms the room, because the heat goes round in a circle.",
    ),
    "How a compiler reads code": (
        "A compiler first splits source text into tokens such as names, numbers and symbols.",
        "A parser arranges the tokens into a tree that mirrors the grammar of the language.",
        "Later passes check types, simplify expressions and decide where values live.",
        "Only at the end does it write instructions that a processor can execute.",
        "Good error messages are hard because the compiler must guess what you meant.",
    ),
    "Why leaves change colour": (
        "Leaves are green because chlorophyll dominates every other pigment in summer.",
        "As days shorten, trees stop making chlorophyll and break down what is left.",
        "Yellow and orange pigments that were there all along finally show through.",
        "Some trees also make new red pigments from sugars trapped in the leaf.",
        "A dry, sunny autumn with cool nights gives the brightest colours.",
    ),
    "How a search index finds pages": (
        "An index stores, for every word, the list of documents that contain it.",
        "Answering a query means intersecting a few of those lists, which is fast.",
        "Rare words narrow the search far more than common ones do.",
        "Ranking then orders the matches by how well each one seems to answer the question.",
        "Building the index is slow, but it only has to happen once per change.",
    ),
    "Why ice floats": (
        "Most liquids shrink as they freeze, but water does the opposite.",
        "In ice, each molecule holds its neighbours at arm's length through hydrogen bonds, leaving open space.",
        "That open lattice makes ice about nine percent less dense than the water around it.",
        "Lakes therefore freeze from the top down, and the ice lid insulates the water below.",
        "Fish survive the winter in that dark, cold, but liquid layer.",
    ),
    "What a hash table does": (
        "A hash table turns a key into a number and uses that number to pick a slot.",
        "Looking a key up then takes about the same time whether the table holds ten items or ten million.",
        "Two keys can land in the same slot, so every table needs a rule for collisions.",
        "When the table gets too full, it grows and moves every item to a new slot.",
        "A poor hash function that sends many keys to one slot quietly ruins the speed.",
    ),
    "How a pin tumbler lock works": (
        "A pin tumbler lock holds a row of split pins that block a rotating plug.",
        "Each pin is cut at a different height, and springs push the pins down into the plug.",
        "The right key lifts every cut to the exact line where the plug meets the housing.",
        "Only then can the plug turn, carrying the cam that moves the bolt.",
        "A worn key still works for years because the tolerances are generous.",
    ),
    "How the immune system remembers": (
        "After an infection, the body keeps a small set of memory cells that recognise the intruder.",
        "A second encounter wakes those cells quickly, long before symptoms would appear.",
        "Vaccines show the immune system a harmless piece or copy of a germ to build that memory.",
        "Some memories last a lifetime, while others fade and need a booster.",
        "Viruses that change their coats often can slip past an old memory.",
    ),
}
EXPLAINER_LINKS = (
    "In short,", "Put simply,", "A common mistake is to forget that", "Notice that",
    "It helps to remember that", "One consequence is that", "Surprisingly,",
)  # fmt: skip
EXPLAINER_TIPS = (
    "Try it yourself with a kitchen scale and a notebook.",
    "A diagram on the back of an envelope makes this much clearer.",
    "If it still feels strange, explain it aloud to a friend.",
    "The details vary, but the principle stays the same.",
)  # fmt: skip


def _fill(template: str, slots: dict[str, object]) -> str:
    """Substitute $slots; Template avoids brace-escaping inside code and JSON."""
    return Template(template).substitute(slots)


def _cap(text: str) -> str:
    """Upper-case the first letter; unlike str.capitalize, keep the rest as written."""
    return text[:1].upper() + text[1:]


def english_story(rng: random.Random) -> str:
    """A short story: an opening, a few middle sentences, an ending."""
    name, friend = rng.sample(NAMES, 2)
    slots = {
        "name": name,
        "friend": friend,
        "place": rng.choice(PLACES),
        "object": rng.choice(OBJECTS),
        "trait": rng.choice(TRAITS),
        "feeling": rng.choice(FEELINGS),
        "speech": rng.choice(SPEECH),
    }
    opening = f"{rng.choice(OPENINGS)}, {name} found {slots['object']} in {slots['place']}. {rng.choice(SCENERY)}"
    middle = [_fill(t, slots) for t in rng.sample(STORY_MIDDLE, rng.randint(4, 7))]
    half = len(middle) // 2
    paragraphs = [
        opening,
        " ".join(middle[:half]),
        " ".join(middle[half:]),
        _fill(rng.choice(STORY_ENDINGS), slots),
    ]
    return "\n\n".join(paragraphs)


def english_explainer(rng: random.Random, title: str | None = None) -> str:
    """A short explanation of one topic: its facts in order, maybe one left out, and a recap."""
    title = title or rng.choice(sorted(EXPLAINERS))
    facts = list(EXPLAINERS[title])
    if rng.random() < 0.5:
        del facts[rng.randrange(1, len(facts))]
    recap = f"{rng.choice(EXPLAINER_LINKS)} {facts[0][0].lower()}{facts[0][1:]}"
    return f"{title}\n\n{' '.join(facts)}\n\n{recap} {rng.choice(EXPLAINER_TIPS)}"


def english_document(rng: random.Random) -> str:
    """A story or an explainer, two to one."""
    if rng.random() < 2 / 3:
        return english_story(rng)
    return english_explainer(rng)


# --------------------------------------------------------------------------- Python

VERBS = (
    "load", "parse", "count", "merge", "filter", "render", "normalize", "score",
    "split", "collect", "validate", "summarize", "rank", "clean", "export", "sync",
)  # fmt: skip
NOUNS = (
    "records", "tokens", "invoices", "readings", "users", "events", "paths", "rows",
    "orders", "samples", "scores", "lines", "batches", "tickets", "sensors", "messages",
)  # fmt: skip
FIELDS = (
    "name", "price", "weight", "label", "city", "status", "created_at", "score",
    "duration", "category", "region", "owner",
)  # fmt: skip
CLASS_NAMES = (
    "Inventory", "Playlist", "Ledger", "Mailbox", "Shelf", "Queue", "Garden",
    "Timetable", "Notebook", "Basket", "Roster", "Archive",
)  # fmt: skip
EXCEPTIONS = ("ConnectionError", "TimeoutError", "OSError", "ValueError")
CODE_COMMENTS = (
    "# Keep this fast: it runs once per request.",
    "# TODO: move the threshold into the config file.",
    "# Sorting first makes the output stable across runs.",
    "# Empty input is common here, so handle it up front.",
    "# The upstream feed sometimes repeats entries; duplicates are harmless.",
    "# Plain loops read better than a clever one-liner here.",
    "# NOTE: values are already validated by the caller.",
)  # fmt: skip
MODULE_DOCS = (
    "Helpers for the nightly $noun report.",
    "Small utilities to $verb $noun before they reach the database.",
    "Command-line tool: $verb $noun from a file and print a summary.",
    "Data model and checks for $noun.",
)  # fmt: skip

# Each snippet: (imports it needs, source with $slots).
SNIPPETS: tuple[tuple[tuple[str, ...], str], ...] = (
    (
        (),
        '''def count_${noun}_by_${field}($noun: list[dict]) -> dict[str, int]:
    """Count $noun per $field, skipping entries without one."""
    $comment
    counts: dict[str, int] = {}
    for item in $noun:
        key = item.get("$field")
        if key is None:
            continue
        counts[key] = counts.get(key, 0) + 1
    return counts
''',
    ),
    (
        ("from dataclasses import dataclass, field",),
        '''@dataclass
class $cls:
    """One entry of the $noun feed."""

    $field: str
    amount: float = 0.0
    tags: list[str] = field(default_factory=list)

    @property
    def is_large(self) -> bool:
        return self.amount > $limit

    def describe(self) -> str:
        return f"{self.$field}: {self.amount:.2f} ({len(self.tags)} tags)"
''',
    ),
    (
        ("import functools", "import time"),
        '''def retry(times: int = $small):
    """Retry a flaky call a few times before giving up."""

    def decorator(func):
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            for attempt in range(1, times + 1):
                try:
                    return func(*args, **kwargs)
                except $exc as error:
                    print(f"attempt {attempt}/{times} failed: {error}")
                    time.sleep($delay * attempt)
            raise RuntimeError(f"{func.__name__} failed after {times} attempts")

        return wrapper

    return decorator


@retry(times=$small)
def fetch_${noun}(source: str) -> list[str]:
    $comment
    with open(source, encoding="utf-8") as handle:
        return [line.strip() for line in handle if line.strip()]
''',
    ),
    (
        (),
        """def ${verb}_${noun}(values: list[float], threshold: float = $limit) -> str:
    kept = [v for v in values if v >= threshold]
    ratio = len(kept) / len(values) if values else 0.0
    return f"kept {len(kept)} of {len(values)} $noun ({ratio:.1%})"
""",
    ),
    (
        ("import json", "from pathlib import Path"),
        '''def load_${noun}(path: Path) -> list[dict]:
    """Read $noun from a JSON lines file; bad lines are reported, not fatal."""
    items = []
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            try:
                items.append(json.loads(line))
            except json.JSONDecodeError as error:
                print(f"{path}:{number}: skipped ({error.msg})")
    return items
''',
    ),
    (
        (),
        """class $cls:
    def __init__(self, name: str, capacity: int = $big) -> None:
        self.name = name
        self.capacity = capacity
        self._items: list[str] = []

    def add(self, item: str) -> bool:
        $comment
        if len(self._items) >= self.capacity:
            return False
        self._items.append(item)
        return True

    def __len__(self) -> int:
        return len(self._items)

    def __repr__(self) -> str:
        return f"$cls(name={self.name!r}, size={len(self)}/{self.capacity})"

    @classmethod
    def from_text(cls, name: str, text: str) -> "$cls":
        box = cls(name)
        for word in text.split("$sep"):
            box.add(word.strip())
        return box
""",
    ),
    (
        (),
        '''def chunk_${noun}(items: list, size: int = $big):
    """Yield fixed-size chunks; the last one may be shorter."""
    for start in range(0, len(items), size):
        yield items[start : start + size]
''',
    ),
    (
        ("import argparse", "import sys"),
        """def main() -> int:
    parser = argparse.ArgumentParser(description="$verb $noun from a file.")
    parser.add_argument("path")
    parser.add_argument("--limit", type=int, default=$big)
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args()
    with open(args.path, encoding="utf-8") as handle:
        lines = handle.read().splitlines()[: args.limit]
    if args.verbose:
        print(f"read {len(lines)} lines from {args.path}")
    for index, line in enumerate(lines):
        print(f"{index:>4}  {line[:60]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
""",
    ),
    (
        (),
        '''def flatten(value, prefix: str = "") -> dict[str, object]:
    """Turn nested dicts into dotted keys, e.g. {"a": {"b": 1}} -> {"a.b": 1}."""
    if not isinstance(value, dict):
        return {prefix: value}
    flat = {}
    for key, inner in value.items():
        name = f"{prefix}$sep{key}" if prefix else str(key)
        flat.update(flatten(inner, name))
    return flat
''',
    ),
    (
        ("import asyncio",),
        '''async def poll_${noun}(queue: asyncio.Queue, interval: float = $delay) -> int:
    """Drain the queue until a None sentinel arrives; return how many were seen."""
    seen = 0
    while True:
        item = await queue.get()
        if item is None:
            break
        seen += 1
        await asyncio.sleep(interval)
    return seen
''',
    ),
    (
        ("import math",),
        """def summarize_${noun}(values: list[float]) -> dict[str, float]:
    if not values:
        raise ValueError("no $noun to summarize")
    mean = sum(values) / len(values)
    var = sum((v - mean) ** 2 for v in values) / len(values)
    return {
        "mean": round(mean, $digits),
        "std": round(math.sqrt(var), $digits),
        "max": max(values),
    }
""",
    ),
    (
        ("import functools",),
        """@functools.lru_cache(maxsize=$big)
def ${verb}_cost(n: int) -> int:
    $comment
    if n < 2:
        return n
    return ${verb}_cost(n - 1) + ${verb}_cost(n - 2)
""",
    ),
    (
        ("from collections import defaultdict",),
        """def group_${noun}_by_${field}($noun: list[dict]) -> dict[str, list[dict]]:
    groups = defaultdict(list)
    for item in $noun:
        groups[item["$field"]].append(item)
    return {
        key: sorted(group, key=lambda x: x.get("score", 0), reverse=True)
        for key, group in groups.items()
    }
""",
    ),
    (
        (),
        """def test_${verb}_${noun}_keeps_order():
    data = [$numbers]
    result = sorted(data, reverse=True)
    assert result[0] == max(data)
    assert len(result) == len(data)
""",
    ),
)


def _code_slots(rng: random.Random) -> dict[str, object]:
    """Random identifiers and constants that make each snippet look different."""
    return {
        "verb": rng.choice(VERBS),
        "noun": rng.choice(NOUNS),
        "field": rng.choice(FIELDS),
        "cls": rng.choice(CLASS_NAMES),
        "exc": rng.choice(EXCEPTIONS),
        "comment": rng.choice(CODE_COMMENTS),
        "limit": round(rng.uniform(0.5, 500.0), rng.choice((1, 2))),
        "small": rng.randint(2, 5),
        "big": rng.choice((8, 16, 32, 64, 100, 128, 256, 1000)),
        "delay": rng.choice((0.1, 0.25, 0.5, 1.0, 2.0)),
        "digits": rng.randint(1, 4),
        "sep": rng.choice((",", ";", "|", ".", "/")),
        "numbers": ", ".join(str(rng.randint(-50, 999)) for _ in range(rng.randint(3, 8))),
    }


def python_module(rng: random.Random) -> str:
    """A small module: docstring, sorted imports, one to three snippets."""
    chosen = rng.sample(SNIPPETS, rng.randint(1, 3))
    slots = _code_slots(rng)
    imports = sorted({line for needs, _ in chosen for line in needs})
    parts = [f'"""{_fill(rng.choice(MODULE_DOCS), slots)}"""']
    if imports:
        parts.append("\n".join(imports))
    parts.extend(_fill(source, slots).rstrip("\n") for _, source in chosen)
    return "\n\n\n".join(parts) + "\n"


# --------------------------------------------------------------------------- German

STÄDTE = (
    "München", "Köln", "Düsseldorf", "Nürnberg", "Lübeck", "Göttingen", "Würzburg",
    "Saarbrücken", "Osnabrück", "Zürich", "Graz", "Tübingen", "Fürth", "Jülich",
)  # fmt: skip
TAGE = ("heute", "morgen", "übermorgen", "am Wochenende", "am Dienstag", "am Freitag")
WETTER = (
    "sonnig und trocken", "bewölkt mit gelegentlichem Nieselregen",
    "stürmisch und kühl", "schwül mit Gewittern am Nachmittag",
    "neblig am Morgen und später heiter", "frostig mit etwas Schnee",
)  # fmt: skip
WETTER_TIPPS = (
    "Nehmen Sie lieber einen Schirm mit.", "Eine dünne Jacke reicht völlig aus.",
    "Vergessen Sie die Sonnencreme nicht.",
    "Auf den Straßen kann es glatt werden, fahren Sie also vorsichtig.",
    "Für einen Spaziergang am Fluss ist es ideal.",
)  # fmt: skip
GEBÄCK = ("Brötchen", "Brezeln", "Körnerbrötchen", "Laugenstangen", "Croissants")
KUCHEN = ("Käsekuchen", "Apfelstrudel", "Streuselkuchen", "Bienenstich", "Mohnkuchen")
GEMÜSE = {
    "Kartoffeln": 20, "Möhren": 12, "Erbsen": 4, "grüne Bohnen": 8,
    "Süßkartoffeln": 15, "Rote-Bete-Knollen": 40,
}  # fmt: skip
BESCHWERDEN = {
    "Halsschmerzen": "Trinken Sie viel warmen Tee mit Honig und sprechen Sie wenig.",
    "Kopfschmerzen": "Gönnen Sie sich Ruhe, trinken Sie genug Wasser und lüften Sie.",
    "Husten": "Inhalieren Sie Wasserdampf und schlafen Sie mit etwas erhöhtem Kopf.",
    "Rückenschmerzen": "Bewegen Sie sich sanft, Wärme hilft oft mehr als Schonung.",
    "Schnupfen": "Eine Nasenspülung mit Salzwasser und viel Schlaf helfen meistens.",
}  # fmt: skip
ZIELE = (
    "zum Bahnhof", "zum Rathaus", "zum Museum", "zum Schwimmbad", "zum Marktplatz",
    "zur Post", "zur Bücherei", "zur Universität", "zur Apotheke", "zur Fähre",
)  # fmt: skip
STRASSEN = (
    "Hauptstraße", "Goethestraße", "Lindenstraße", "Schloßallee", "Mühlenweg",
    "Bahnhofstraße", "Königsstraße", "Gärtnerstraße", "Brückenstraße",
)  # fmt: skip
WÖRTER = (
    ("street", "Straße"), ("size", "Größe"), ("greetings", "Grüße"),
    ("key", "Schlüssel"), ("door", "Tür"), ("vegetables", "Gemüse"),
    ("cheese", "Käse"), ("to be called", "heißen"), ("beautiful", "schön"),
    ("apples", "Äpfel"), ("kitchen", "Küche"), ("sweet", "süß"), ("large", "groß"),
    ("pedestrian", "Fußgänger"), ("bakery", "Bäckerei"), ("oil", "Öl"),
)  # fmt: skip
MÜLL = (
    ("Der leere Joghurtbecher", "gehört in die gelbe Tonne, ausspülen ist nicht nötig."),
    ("Die alte Zeitung", "kommt in die Papiertonne."),
    ("Der Kaffeesatz", "gehört in die Biotonne, der Filter übrigens auch."),
    ("Die kaputte Glühbirne", "gehört in den Restmüll, Energiesparlampen zum Wertstoffhof."),
    ("Die Bananenschale", "kommt in die Biotonne oder auf den Kompost."),
    ("Der Pizzakarton", "darf in die Papiertonne, solange er nicht zu fettig ist."),
)  # fmt: skip
GESCHÄFTE = (
    "die Bücherei", "das Bürgeramt", "der Baumarkt", "die Apotheke am Markt",
    "das Schwimmbad", "die Bäckerei Müller", "das Fundbüro",
)  # fmt: skip
MANNSCHAFTEN = ("Grünwald", "Süderfeld", "Lößnitz", "Mühlbach", "Weißenfels", "Großbeeren")
FARBEN = ("Dunkelblau", "Grün", "Weiß", "Grau", "Bordeauxrot")
GRÖSSEN = ("S", "M", "L", "XL", "38", "40", "42", "44")


def _euro(value: float) -> str:
    """German price format: comma as the decimal mark."""
    return f"{value:.2f}".replace(".", ",")


def _ascii_german(word: str) -> str:
    """Spell umlauts and ß the way a keyboard without them would."""
    table = {"ä": "ae", "ö": "oe", "ü": "ue", "Ä": "Ae", "Ö": "Oe", "Ü": "Ue", "ß": "ss"}
    return "".join(table.get(ch, ch) for ch in word)


def _weather(rng: random.Random) -> list[tuple[str, str]]:
    tag, stadt = rng.choice(TAGE), rng.choice(STÄDTE)
    turns = [
        (
            f"Wie wird das Wetter {tag} in {stadt}?",
            f"{_cap(tag)} wird es in {stadt} {rng.choice(WETTER)}, bei etwa "
            f"{rng.randint(-4, 31)} Grad. {rng.choice(WETTER_TIPPS)}",
        )
    ]
    if rng.random() < 0.5:
        turns.append(
            (
                "Und wie sieht es nachts aus?",
                f"Nachts kühlt es auf ungefähr {rng.randint(-9, 18)} Grad ab, "
                f"der Wind kommt aus {rng.choice(('Nordwest', 'Süden', 'Osten'))}.",
            )
        )
    return turns


def _train(rng: random.Random) -> list[tuple[str, str]]:
    stadt, über = rng.sample(STÄDTE, 2)
    umstieg = f", und Sie müssen einmal in {über} umsteigen" if rng.random() < 0.4 else ""
    frage = rng.choice(
        (
            f"Wann fährt der nächste Zug nach {stadt}?",
            f"Gibt es heute noch eine Verbindung nach {stadt}?",
        )
    )
    turns = [
        (
            frage,
            f"Der nächste Zug nach {stadt} fährt um {rng.randint(5, 23):02d}:"
            f"{rng.randrange(0, 60, 5):02d} Uhr von Gleis {rng.randint(1, 14)}. Die Fahrt "
            f"dauert ungefähr {rng.randint(25, 290)} Minuten{umstieg}.",
        )
    ]
    if rng.random() < 0.6:
        preis = rng.uniform(9, 140)
        turns.append(
            (
                "Was kostet eine Fahrkarte?",
                f"Eine einfache Fahrt kostet {_euro(preis)} Euro, mit Ermäßigung ungefähr {_euro(preis * 0.75)} Euro.",
            )
        )
    return turns


def _bakery(rng: random.Random) -> list[tuple[str, str]]:
    n, gebäck, kuchen = rng.randint(2, 12), rng.choice(GEBÄCK), rng.choice(KUCHEN)
    summe = n * rng.choice((0.45, 0.55, 0.65, 0.9)) + rng.choice((2.4, 2.8, 3.2))
    turns = [
        (
            f"Guten Morgen! Ich hätte gern {n} {gebäck} und ein Stück {kuchen}.",
            f"Gern. Das macht zusammen {_euro(summe)} Euro. Darf es sonst noch etwas sein?",
        )
    ]
    if rng.random() < 0.5:
        turns.append(
            (
                "Nein, danke. Kann ich mit Karte zahlen?",
                "Ja, natürlich. Halten Sie die Karte einfach an das Gerät. Schönen Tag noch!",
            )
        )
    return turns


def _cooking(rng: random.Random) -> list[tuple[str, str]]:
    gemüse = rng.choice(sorted(GEMÜSE))
    minuten = GEMÜSE[gemüse] + rng.randint(-2, 5)
    turns = [
        (
            f"Wie lange muss ich {gemüse} kochen?",
            f"{_cap(gemüse)} brauchen in kochendem Salzwasser etwa {minuten} Minuten. "
            "Prüfen Sie mit einer Gabel, ob sie weich genug sind.",
        )
    ]
    if rng.random() < 0.4:
        turns.append(
            (
                "Kann ich statt Butter auch Öl nehmen?",
                "Ja, für die meisten Gerichte funktioniert Öl genauso gut; beim Backen "
                "wird der Teig allerdings etwas fester und weniger süß im Geschmack.",
            )
        )
    return turns


def _doctor(rng: random.Random) -> list[tuple[str, str]]:
    beschwerde = rng.choice(sorted(BESCHWERDEN))
    return [
        (
            f"Ich habe seit {rng.randint(2, 9)} Tagen {beschwerde}. Was soll ich tun?",
            f"{BESCHWERDEN[beschwerde]} Wenn es nach {rng.randint(3, 7)} weiteren Tagen "
            "nicht besser wird, gehen Sie bitte zu Ihrer Hausärztin.",
        )
    ]


def _directions(rng: random.Random) -> list[tuple[str, str]]:
    richtung = rng.choice(("links", "rechts"))
    return [
        (
            f"Entschuldigung, wie komme ich {rng.choice(ZIELE)}?",
            f"Gehen Sie die {rng.choice(STRASSEN)} geradeaus bis zur Ampel und biegen Sie "
            f"dann {richtung} ab. Nach etwa {rng.randrange(100, 900, 50)} Metern sind Sie "
            "schon da, gleich neben dem großen Brunnen.",
        )
    ]


def _translation(rng: random.Random) -> list[tuple[str, str]]:
    englisch, deutsch = rng.choice(WÖRTER)
    turns = [(f"Was heißt „{englisch}“ auf Deutsch?", f"„{englisch}“ heißt „{deutsch}“.")]
    if _ascii_german(deutsch) != deutsch and rng.random() < 0.7:
        turns.append(
            (
                "Und wie schreibe ich das ohne Umlaute oder ß?",
                f"Man schreibt ä, ö und ü als ae, oe und ue und ß als ss, also „{_ascii_german(deutsch)}“.",
            )
        )
    return turns


def _recycling(rng: random.Random) -> list[tuple[str, str]]:
    ding, antwort = rng.choice(MÜLL)
    return [(f"In welche Tonne gehört {ding[0].lower()}{ding[1:]}?", f"{ding} {antwort}")]


def _opening_hours(rng: random.Random) -> list[tuple[str, str]]:
    geschäft = rng.choice(GESCHÄFTE)
    auf, zu, samstag = rng.randint(7, 10), rng.randint(17, 20), rng.randint(12, 16)
    return [
        (
            f"Wann hat {geschäft} geöffnet?",
            f"{_cap(geschäft)} hat montags bis freitags von {auf} bis {zu} Uhr geöffnet, "
            f"samstags nur bis {samstag} Uhr. Sonntags bleibt es geschlossen.",
        )
    ]


def _football(rng: random.Random) -> list[tuple[str, str]]:
    sieger, verlierer = rng.sample(MANNSCHAFTEN, 2)
    tore = rng.randint(1, 5)
    return [
        (
            "Wie ist das Spiel gestern ausgegangen?",
            f"{sieger} hat {tore}:{rng.randint(0, tore - 1)} gegen {verlierer} gewonnen. "
            f"Das entscheidende Tor fiel in der {rng.randint(3, 90)}. Minute.",
        )
    ]


def _clothes(rng: random.Random) -> list[tuple[str, str]]:
    größe = rng.choice(GRÖSSEN)
    return [
        (
            f"Ich suche diese Jacke in Größe {größe}. Haben Sie die noch?",
            f"In Größe {größe} haben wir sie leider nur noch in {rng.choice(FARBEN)}. "
            "Möchten Sie sie anprobieren? Die Umkleide ist gleich hinter der Tür.",
        )
    ]


GERMAN_TOPICS: tuple[Callable[[random.Random], list[tuple[str, str]]], ...] = (
    _weather, _train, _bakery, _cooking, _doctor, _directions, _translation,
    _recycling, _opening_hours, _football, _clothes,
)  # fmt: skip


def german_dialogue(rng: random.Random) -> list[dict[str, str]]:
    """One chat: one or two topics, each a short user/assistant exchange."""
    turns = []
    for topic in rng.sample(GERMAN_TOPICS, rng.choice((1, 1, 2))):
        turns.extend(topic(rng))
    messages = []
    for user, assistant in turns:
        messages.append({"role": "user", "content": user})
        messages.append({"role": "assistant", "content": assistant})
    return messages


def german_document(rng: random.Random) -> str:
    """A dialogue as plain text, one message per line, for pretraining."""
    return "\n".join(message["content"] for message in german_dialogue(rng))


# --------------------------------------------------------------------------- Korean

PEOPLE_KO = (
    "민수", "지영", "서연", "준호", "하은", "도윤", "할머니", "선생님", "옆집 아저씨",
    "동생", "요리사", "우체부",
)  # fmt: skip
TIMES_KO = ("아침", "점심", "저녁", "오늘 아침", "어제 저녁", "지난 주말", "일요일 오후")
PLACES_KO = (
    "도서관", "시장", "공원", "학교 운동장", "바닷가", "작은 카페", "병원", "지하철역",
    "뒷산", "박물관", "우체국", "부엌",
)  # fmt: skip
ACTS_KO = (
    ("오래된 책", "읽었다"), ("사과 세 개", "샀다"), ("김치찌개", "끓였다"),
    ("긴 편지", "썼다"), ("사진 몇 장", "찍었다"), ("따뜻한 커피", "마셨다"),
    ("파란 우산", "잃어버렸다"), ("고장 난 자전거", "고쳤다"), ("노란 꽃", "심었다"),
    ("새 공책", "펼쳤다"), ("친구의 전화", "기다렸다"), ("동네 지도", "그렸다"),
)  # fmt: skip
PLACE_MOODS_KO = (
    "조용하고 따뜻했다", "사람들로 붐볐다", "생각보다 넓었다", "오래되었지만 깨끗했다",
    "늘 그렇듯 시끄러웠다", "창문이 많아서 밝았다",
)  # fmt: skip
CAUSES_KO = ("하늘이 맑아서", "비가 많이 와서", "바람이 차가워서", "날씨가 더워서", "눈이 내려서")
RESULTS_KO = (
    "집에 일찍 돌아갔다", "창가에 앉아 쉬었다", "천천히 걸었다", "따뜻한 차를 마셨다",
    "계획을 바꾸었다", "친구에게 전화를 걸었다",
)  # fmt: skip
QUOTES_KO = (
    "내일 다시 여기서 만나자.", "오늘은 정말 즐거운 하루였어요.", "이건 생각보다 어렵네.",
    "조금만 더 기다려 주세요.", "같이 점심 먹을래?", "천천히 해도 괜찮아요.",
)  # fmt: skip
FEELINGS_KO = ("조금 아쉬웠다", "마음이 편안해졌다", "기분이 좋아졌다", "웃음이 났다")
HABITS_KO = ("운동", "한국어 공부", "요리 연습", "일기 쓰기", "정리 정돈", "독서", "산책")
FACTS_KO = (
    "물은 백 도에서 끓는다.", "김치는 배추와 고춧가루, 마늘로 만든다.",
    "자전거를 탈 때는 헬멧을 쓰는 것이 안전하다.", "도서관에서는 조용히 해야 한다.",
    "봄에는 꽃이 피고 가을에는 낙엽이 진다.", "지하철은 출퇴근 시간에 가장 붐빈다.",
    "잠을 충분히 자면 집중력이 좋아진다.", "우체국에서는 편지와 소포를 보낼 수 있다.",
)  # fmt: skip


def _has_final_consonant(word: str) -> bool:
    """True when the last Hangul syllable ends in a consonant (it picks the particle)."""
    code = ord(word[-1]) - 0xAC00
    return 0 <= code < 11172 and code % 28 != 0


def _particle(word: str, with_final: str, without_final: str) -> str:
    """Attach 은/는, 이/가 or 을/를 as Korean grammar requires."""
    return word + (with_final if _has_final_consonant(word) else without_final)


def korean_sentence(rng: random.Random) -> str:
    """One sentence from a handful of patterns, with correct particles."""
    person, place = rng.choice(PEOPLE_KO), rng.choice(PLACES_KO)
    obj, verb = rng.choice(ACTS_KO)
    patterns = (
        lambda: (
            f"{rng.choice(TIMES_KO)}에 {_particle(person, '은', '는')} {place}에서 {_particle(obj, '을', '를')} {verb}."
        ),
        lambda: f"{_particle(place, '은', '는')} {rng.choice(PLACE_MOODS_KO)}.",
        lambda: f"{rng.choice(CAUSES_KO)} {_particle(person, '은', '는')} {rng.choice(RESULTS_KO)}.",
        lambda: f'{_particle(person, "이", "가")} 말했다. "{rng.choice(QUOTES_KO)}"',
        lambda: (
            f"{rng.randint(1, 12)}시 {rng.randrange(0, 60, 5)}분쯤 {_particle(person, '이', '가')} {place}에 도착했다."
        ),
        lambda: f"메모: {_particle(rng.choice(HABITS_KO), '은', '는')} 매일 조금씩 하는 것이 중요하다.",
        lambda: f"그래서 {_particle(person, '은', '는')} {rng.choice(FEELINGS_KO)}.",
        lambda: rng.choice(FACTS_KO),
    )
    return rng.choice(patterns)()


def korean_paragraph(rng: random.Random) -> str:
    """Four to eight sentences on one line."""
    return " ".join(korean_sentence(rng) for _ in range(rng.randint(4, 8)))


# --------------------------------------------------------------------------- Numbers


def _day(rng: random.Random) -> date:
    return date(2019, 1, 1) + timedelta(days=rng.randrange(2500))


def _invoice(rng: random.Random) -> str:
    issued = _day(rng)
    qty, price, vat = rng.randint(1, 40), rng.uniform(0.5, 250), rng.choice((7, 19, 20))
    net = qty * price
    return (
        f"Invoice INV-{issued.year}-{rng.randint(1, 99999):05d}, issued {issued}, due "
        f"{issued + timedelta(days=30)}. {qty} x {price:.2f} EUR = {net:.2f} EUR; "
        f"VAT {vat}% = {net * vat / 100:.2f} EUR; total {net * (1 + vat / 100):.2f} EUR."
    )


def _sensor_table(rng: random.Random) -> str:
    rows = ["time,temp_c,rh_pct,pressure_hpa"]
    temp, hour = rng.uniform(-5, 30), rng.randint(0, 18)
    for step in range(rng.randint(4, 9)):
        temp += rng.uniform(-1.2, 1.2)
        rows.append(
            f"{hour + step:02d}:{rng.choice((0, 15, 30, 45)):02d},{temp:.1f},"
            f"{rng.randint(20, 98)},{rng.uniform(985, 1035):.1f}"
        )
    return "\n".join(rows)


def _measurement(rng: random.Random) -> str:
    length, width, mass = rng.uniform(1, 80), rng.uniform(0.5, 20), rng.uniform(0.01, 9)
    return (
        f"Sample S-{rng.randint(100, 9999)}: length {length:.2f} mm, width {width:.2f} mm, "
        f"mass {mass:.3f} g, aspect {length / width:.3f}, batch {rng.randint(1, 64)}/64"
    )


def _access_log(rng: random.Random) -> str:
    lines = []
    for _ in range(rng.randint(2, 6)):
        stamp = f"{_day(rng)}T{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:"
        method = rng.choice(("GET", "POST", "PUT", "DELETE"))
        lines.append(
            f"{stamp}{rng.randint(0, 59):02d}Z {method} /api/v{rng.randint(1, 3)}/items/"
            f"{rng.randint(1, 99999)} {rng.choice((200, 201, 204, 304, 404, 500))} "
            f"{rng.randint(2, 2400)}ms {rng.randint(0, 65536)}B"
        )
    return "\n".join(lines)


def _hashes(rng: random.Random) -> str:
    uid = f"{rng.getrandbits(128):032x}"
    return (
        f"sha256 {rng.getrandbits(256):064x}\nsize {rng.randint(10, 10**9)} bytes\n"
        f"crc32 0x{rng.getrandbits(32):08x}\n"
        f"uuid {uid[:8]}-{uid[8:12]}-{uid[12:16]}-{uid[16:20]}-{uid[20:]}"
    )


def _price_change(rng: random.Random) -> str:
    old = rng.uniform(1, 900)
    new = old * rng.uniform(0.6, 1.3)
    return (
        f"SKU {rng.randint(10000, 99999)}-{rng.choice('ABCDEFGH')}: {old:.2f} -> "
        f"{new:.2f} ({(new - old) / old * 100:+.1f}%) on {_day(rng)}"
    )


def _station(rng: random.Random) -> str:
    return (
        f"Station {rng.randint(1, 500)}: lat {rng.uniform(-60, 70):.4f}, lon "
        f"{rng.uniform(-180, 180):.4f}, elevation {rng.randint(-20, 3800)} m, reading "
        f"{rng.uniform(0, 120):.1f} at {rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}"
    )


def _stock_table(rng: random.Random) -> str:
    rows = ["| id | qty | unit | price |", "|---:|---:|:---|---:|"]
    for _ in range(rng.randint(3, 6)):
        rows.append(
            f"| {rng.randint(1, 9999)} | {rng.randint(0, 500)} | "
            f"{rng.choice(('kg', 'pcs', 'm', 'l'))} | {rng.uniform(0.1, 99):.2f} |"
        )
    return "\n".join(rows)


def _matrix(rng: random.Random) -> str:
    size = rng.randint(2, 4)
    rows = ("[" + ", ".join(f"{rng.uniform(-9, 9):.2f}" for _ in range(size)) + "]" for _ in range(size))
    return "[" + ", ".join(rows) + "]"


def _timetable(rng: random.Random) -> str:
    start, gap = rng.randint(300, 420), rng.choice((10, 15, 20, 30))
    times = " ".join(f"{(start + i * gap) // 60:02d}:{(start + i * gap) % 60:02d}" for i in range(8))
    return f"Line {rng.randint(1, 99)} departs {times}"


NUMBER_RECORDS: tuple[Callable[[random.Random], str], ...] = (
    _invoice, _sensor_table, _measurement, _access_log, _hashes, _price_change,
    _station, _stock_table, _matrix, _timetable,
)  # fmt: skip


def numbers_record(rng: random.Random) -> tuple[str, str]:
    """(kind, text) of one number-heavy record."""
    make = rng.choice(NUMBER_RECORDS)
    return make.__name__.lstrip("_"), make(rng)


# --------------------------------------------------------------------------- Russian

NAMES_RU = (
    "Анна", "Иван", "Ольга", "Дмитрий", "Мария", "Сергей", "Наталья", "Алексей",
    "Елена", "Павел", "Татьяна", "Михаил",
)  # fmt: skip
TIMES_RU = (
    "Утром", "Вечером", "В субботу", "По воскресеньям", "Каждый день", "Зимой",
    "Летом", "После работы",
)  # fmt: skip
ACTIONS_RU = (
    "читает книгу в библиотеке", "идёт на работу пешком", "готовит суп на кухне",
    "пишет письмо старому другу", "слушает радио на балконе",
    "покупает хлеб и молоко в магазине", "ждёт автобус на остановке",
    "поливает цветы в саду", "гуляет с собакой в парке", "решает задачи по математике",
    "играет в шахматы с соседом", "чинит старый велосипед",
)  # fmt: skip
WEATHER_RU = (
    "тёплая и солнечная", "холодная и ветреная", "дождливая", "пасмурная, но сухая",
    "морозная и ясная",
)  # fmt: skip
SIGHTS_RU = (
    "большая библиотека", "старый парк с прудом", "новый вокзал", "маленький рынок у реки",
    "музей истории", "школа музыки",
)  # fmt: skip
QUOTES_RU = (
    "Давай встретимся завтра", "Мне нужно ещё немного времени", "Сегодня прекрасный день",
    "Пойдём домой, уже поздно", "Спасибо за помощь",
)  # fmt: skip
HOWTO_RU = (
    ("испечь хлеб", "замесить тесто и дать ему подняться в тёплом месте"),
    ("выучить новый язык", "заниматься понемногу каждый день"),
    ("сберечь воду", "закрывать кран, когда чистишь зубы"),
    ("хорошо выспаться", "ложиться спать в одно и то же время"),
    ("вырастить помидоры", "поливать их утром и не забывать о солнце"),
    ("найти ошибку в программе", "читать сообщение об ошибке до конца"),
)  # fmt: skip


def russian_sentence(rng: random.Random) -> str:
    """One sentence; present tense keeps verbs free of gender agreement."""
    name = rng.choice(NAMES_RU)
    goal, step = rng.choice(HOWTO_RU)
    people = f"{rng.randrange(10_000, 100_000) * 10:,}".replace(",", " ")
    patterns = (
        lambda: f"{rng.choice(TIMES_RU)} {name} {rng.choice(ACTIONS_RU)}.",
        lambda: f"Погода сегодня {rng.choice(WEATHER_RU)}.",
        lambda: f"В нашем городе есть {rng.choice(SIGHTS_RU)}.",
        lambda: f"— {rng.choice(QUOTES_RU)}, — говорит {name}.",
        lambda: f"Чтобы {goal}, нужно {step}.",
        lambda: f"В {rng.randint(1950, 2024)} году в городе жило {people} человек.",
    )
    return rng.choice(patterns)()


def russian_paragraph(rng: random.Random) -> str:
    """Four to seven sentences on one line."""
    return " ".join(russian_sentence(rng) for _ in range(rng.randint(4, 7)))


# --------------------------------------------------------------------------- JSON, Markdown


def _json_object(rng: random.Random) -> dict[str, object]:
    noun = rng.choice(NOUNS)
    kinds = (
        lambda: {
            "name": f"{rng.choice(VERBS)}-{noun}",
            "version": f"{rng.randint(0, 4)}.{rng.randint(0, 20)}.{rng.randint(0, 9)}",
            "dependencies": sorted(rng.sample(VERBS, 3)),
            "settings": {"retries": rng.randint(0, 5), "debug": rng.random() < 0.3},
        },
        lambda: {
            "status": rng.choice(("ok", "partial", "error")),
            "items": [
                {
                    "id": rng.randint(1, 99999),
                    "price": round(rng.uniform(1, 300), 2),
                    "tags": rng.sample(FIELDS, 2),
                }
                for _ in range(rng.randint(1, 4))
            ],
            "next_cursor": f"{rng.getrandbits(64):016x}",
        },
        lambda: {
            "event": f"{noun}.{rng.choice(('created', 'updated', 'deleted'))}",
            "at": f"{_day(rng)}T{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:00Z",
            "actor": {"name": rng.choice(NAMES), "city": rng.choice(STÄDTE)},
        },
    )
    return rng.choice(kinds)()


def json_document(rng: random.Random) -> str:
    """A config file, an API response or an event, pretty or compact."""
    indent = rng.choice((None, 2, 4))
    return json.dumps(_json_object(rng), indent=indent, ensure_ascii=False)


def markdown_document(rng: random.Random) -> str:
    """A README-like note: heading, prose, a list, a table and a code block."""
    slots = _code_slots(rng)
    title = f"{_cap(str(slots['verb']))} {slots['noun']}"
    bullets = "\n".join(
        f"- [{rng.choice(' x')}] {_cap(rng.choice(VERBS))} the {rng.choice(NOUNS)}" for _ in range(rng.randint(2, 5))
    )
    table = "\n".join(
        ["| option | default | meaning |", "|---|---|---|"]
        + [
            f"| `--{rng.choice(FIELDS)}` | {rng.randint(0, 100)} | {rng.choice(EXPLAINER_TIPS)} |"
            for _ in range(rng.randint(2, 4))
        ]
    )
    install = f"```bash\npip install {slots['verb']}-{slots['noun']}\n```"
    code = f"```python\n{python_module(rng).rstrip()}\n```"
    about = english_explainer(rng).split("\n\n")[1]
    sections = (f"# {title}", about, "## Tasks", bullets, "## Options", table)
    return "\n\n".join((*sections, "## Install", install, "## Example", code))


# --------------------------------------------------------------------------- Mixtures

# Share of the pretraining mix in UTF-8 bytes: every kind of text the samples contain,
# plus Russian, JSON and Markdown that no sample corpus covers.
PRETRAINING_MIX: dict[str, tuple[Callable[[random.Random], str], float]] = {
    "english": (english_document, 0.26),
    "python": (python_module, 0.18),
    "german": (german_document, 0.12),
    "korean": (korean_paragraph, 0.10),
    "numbers": (lambda rng: numbers_record(rng)[1], 0.10),
    "russian": (russian_paragraph, 0.08),
    "json": (json_document, 0.06),
    "markdown": (markdown_document, 0.10),
}


def pretraining_documents(seed: int, total_bytes: int) -> list[str]:
    """About `total_bytes` of documents in the mix's shares, shuffled together."""
    rng = random.Random(seed)
    documents = []
    for make, share in PRETRAINING_MIX.values():
        documents.extend(_until(rng, make, int(share * total_bytes)))
    rng.shuffle(documents)
    return documents


def reference_text(seed: int = REFERENCE_SEED, total_bytes: int = REFERENCE_BYTES) -> str:
    """The shipped reference sample; documents are separated by blank lines."""
    return "\n\n".join(pretraining_documents(seed, total_bytes)) + "\n"


# --------------------------------------------------------------------------- Writers


def _until(rng: random.Random, make: Callable[[random.Random], str], size: int) -> list[str]:
    """Draw items until their UTF-8 size passes `size`."""
    items, total = [], 0
    while total < size:
        items.append(make(rng))
        total += len(items[-1].encode("utf-8"))
    return items


def gzip_bytes(data: bytes) -> bytes:
    """gzip with mtime=0 and no file name, so equal input gives equal bytes."""
    return gzip.compress(data, compresslevel=9, mtime=0)


def write_english(folder: Path, rng: random.Random) -> None:
    """Three story collections (.txt) and three explainer collections (.md)."""
    folder.mkdir(parents=True, exist_ok=True)
    for index in range(1, 4):
        stories = _until(rng, english_story, 18_000)
        text = "\n\n* * *\n\n".join(stories) + "\n"
        (folder / f"stories-{index}.txt").write_text(text, encoding="utf-8")
    for index in range(1, 4):
        # Whole rounds over the topics, so no topic crowds out the others.
        titles = [title for _ in range(2) for title in rng.sample(sorted(EXPLAINERS), len(EXPLAINERS))]
        headed = [f"## {english_explainer(rng, title)}" for title in titles]
        body = "\n\n".join([f"# Explainers, part {index}", *headed])
        (folder / f"explainers-{index}.md").write_text(body + "\n", encoding="utf-8")


def write_python(path: Path, rng: random.Random) -> None:
    lines = [json.dumps({"text": module, "lang": "python"}) for module in _until(rng, python_module, 110_000)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def write_german(path: Path, rng: random.Random) -> None:
    lines, total = [], 0
    while total < 110_000:
        messages = german_dialogue(rng)
        total += sum(len(m["content"].encode("utf-8")) for m in messages)
        lines.append(json.dumps({"messages": messages}, ensure_ascii=False))
    path.write_bytes(gzip_bytes(("\n".join(lines) + "\n").encode("utf-8")))


def write_korean(path: Path, rng: random.Random) -> None:
    paragraphs = _until(rng, korean_paragraph, 110_000)
    path.write_text("\n\n".join(paragraphs) + "\n", encoding="utf-8")


def write_numbers(path: Path, rng: random.Random) -> None:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["id", "kind", "text"])
    total, row_id = 0, 0
    while total < 110_000:
        kind, text = numbers_record(rng)
        row_id += 1
        writer.writerow([row_id, kind, text])
        total += len(text)
    path.write_text(buffer.getvalue(), encoding="utf-8")


def write_reference(path: Path) -> None:
    """The demo model's reference sample, gzipped; also called by build_demo_model."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(gzip_bytes(reference_text().encode("utf-8")))


def write_sample_corpora(out: Path, seed: int = SAMPLE_SEED) -> None:
    """All five corpora; each gets its own stream so one can change alone."""
    out.mkdir(parents=True, exist_ok=True)
    write_english(out / "english-prose", random.Random(seed + 1))
    write_python(out / "python-code.jsonl", random.Random(seed + 2))
    write_german(out / "german-dialogue.jsonl.gz", random.Random(seed + 3))
    write_korean(out / "korean-notes.txt", random.Random(seed + 4))
    write_numbers(out / "numbers-tables.csv", random.Random(seed + 5))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=REPO_ROOT / "sample_corpora")
    parser.add_argument(
        "--reference",
        type=Path,
        default=REPO_ROOT / "vocabrisk" / "demo_model" / "reference.txt.gz",
    )
    args = parser.parse_args()
    write_sample_corpora(args.out)
    write_reference(args.reference)
    for path in sorted([*args.out.rglob("*"), args.reference]):
        if path.is_file():
            print(f"{path.stat().st_size:>8}  {path}")


if __name__ == "__main__":
    main()
