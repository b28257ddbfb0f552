"""compare.py NATIVE.xml VCUDA.xml - tests whose outcome differs between two
JUnit reports of the same suite (pysuite.sh). Exit 1 when a test that passed
natively did not pass through vcuda."""
import sys
import xml.etree.ElementTree as ET


def outcomes(path):
    res = {}
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError) as e:
        print(f"{path}: {e}")
        return res
    for tc in root.iter("testcase"):
        name = f"{tc.get('classname')}::{tc.get('name')}"
        kind, msg = "passed", ""
        for child in tc:
            if child.tag in ("failure", "error", "skipped"):
                kind = {"failure": "failed", "error": "error", "skipped": "skipped"}[child.tag]
                msg = (child.get("message") or "").splitlines()[0][:160] if child.get("message") else ""
                break
        res[name] = (kind, msg)
    return res


def main():
    nat, vc = outcomes(sys.argv[1]), outcomes(sys.argv[2])
    count = lambda r, k: sum(1 for v in r.values() if v[0] == k)
    for label, r in (("native", nat), ("vcuda", vc)):
        print(f"{label}: {len(r)} tests, " + ", ".join(f"{count(r, k)} {k}" for k in ("passed", "failed", "error", "skipped")))
    worse = sorted(n for n, (k, _) in nat.items() if k == "passed" and vc.get(n, ("missing", ""))[0] != "passed")
    better = sorted(n for n, (k, _) in vc.items() if k == "passed" and nat.get(n, ("missing", ""))[0] != "passed")
    for n in worse:
        k, msg = vc.get(n, ("missing", ""))
        print(f"WORSE {n}: {k} {msg}")
    for n in better:
        print(f"better {n}: native {nat.get(n, ('missing', ''))[0]}")
    print(f"differ: {len(worse)} worse through vcuda, {len(better)} better")
    return 1 if worse else 0


if __name__ == "__main__":
    sys.exit(main())
