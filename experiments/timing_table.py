"""Write results/timing-parameters.md: every timing parameter of the timed mode with its
default, the Kafka setting it stands for and what it means, from the one table that
defines them (kraftwalk.vocabulary.timing.TIMING), and what each profile changes.

    python experiments/timing_table.py
"""
from pathlib import Path

from kraftwalk.elect_config import NAMED_VALUES, PROFILE_HELP, PROFILES
from kraftwalk.vocabulary.releases import DEFAULT, timing as release_timing
from kraftwalk.vocabulary.timing import SCENARIO_NAMES, TIMING
from kraftwalk.storage.output import markdown_table, write_text_atomic
from kraftwalk.storage.provenance import made_by


def default_text(k, t) -> str:
    value = NAMED_VALUES[t.name][int(t.default)] if t.name in NAMED_VALUES else f"{t.default:g}"
    return value + (f" (Kafka {DEFAULT}; set by `--kafka`)" if t.name in release_timing(DEFAULT)
                    else "")


def main() -> None:
    rows = [[f"`{t.name}`", default_text(k, t), t.kafka, t.doc]
            for k, t in TIMING.items() if t.name != "scenario"]
    text = markdown_table(["--timing NAME", "default", "Kafka setting", "meaning"], rows)
    prof = [[f"`{name}`", PROFILE_HELP[name],
             ", ".join(f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}"
                       for k, v in over.items()) or "-"] for name, over in PROFILES.items()]
    text += "\n" + markdown_table(["--profile", "what", "overrides"], prof)
    text += ("\nScenarios (`--scenario`): " + ", ".join(f"`{s}`" for s in SCENARIO_NAMES)
             + f".\n\n`python experiments/timing_table.py`; made by {made_by()}.\n")
    out = Path(__file__).resolve().parent.parent / "results" / "timing-parameters.md"
    write_text_atomic(out, text)
    print(text)


if __name__ == "__main__":
    main()
