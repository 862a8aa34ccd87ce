#!/usr/bin/env python3
"""Validates a FHIR Observation with the `fhir.resources` library (PyPI) as an R4(B) resource and
prints its audiogram as JSON: {"left": {"1000": [15, null]}, ...} — per ear and frequency the
value and its comparator. Run with the Python of the test venv (scripts/setup.sh makes it).

Usage: validate_fhir.py FILE. Exit 0 and the JSON when valid; 1 and the validation error if not.
"""
import json
import sys

from fhir.resources.R4B.observation import Observation  # R4B: R4's Observation, unchanged

LOINC = "http://loinc.org"


def main():
    with open(sys.argv[1]) as file:
        text = file.read()
    try:
        observation = Observation.parse_raw(text) if hasattr(Observation, "parse_raw") else Observation.model_validate_json(text)
    except Exception as error:  # the library's validation error, whatever its class
        print(f"invalid: {error}")
        return 1
    audiogram = {}
    for component in observation.component or []:
        coding = next(c for c in component.code.coding if c.system == LOINC)
        display = coding.display or ""
        ear = "left" if "left" in display else "right"
        hz = display.rsplit("--", 1)[-1].split(" ")[0]
        quantity = component.valueQuantity
        audiogram.setdefault(ear, {})[hz] = [float(quantity.value), quantity.comparator]
    print(json.dumps({"code": observation.code.coding[0].code, "status": observation.status, "audiogram": audiogram}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
