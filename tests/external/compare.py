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
    # A test one run did not reach (a run cut by pysuite.sh's PYSUITE_TMO)
    # is counted apart, not as a difference.
    worse = sorted(n for n, (k, _) in nat.items() if k == "passed" and n in vc and vc[n][0] != "passed")
    better = sorted(n for n, (k, _) in vc.items() if k == "passed" and n in nat and nat[n][0] != "passed")
    unreached = sum(1 for n in nat if n not in vc), sum(1 for n in vc if n not in nat)
    for n in worse:
        k, msg = vc[n]
        print(f"WORSE {n}: {k} {msg}")
    for n in better:
        print(f"better {n}: native {nat[n][0]}")
    print(f"differ: {len(worse)} worse through vcuda, {len(better)} better"
          f" ({unreached[0]} run natively only, {unreached[1]} through vcuda only)")
    return 1 if worse else 0


if __name__ == "__main__":
    sys.exit(main())
