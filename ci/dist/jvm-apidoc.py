"""The API documentation of the JVM jar, for its -javadoc.jar (Maven Central wants one):

  python3 ci/dist/jvm-apidoc.py JAR GUIDE VERSION OUT

Dokka (Kotlin's documentation tool) comes from Maven Central, which the build machine cannot
reach, and javadoc cannot read Kotlin. So the page is made from what is certain: the JVM guide
(GUIDE, docs/jvm.md) and the public signatures of every class a program uses, as `javap -public`
reads them from the compiled jar. uniffi's plumbing (FfiConverter*, Uniffi*, the native handles)
is left out. Writes OUT/index.html.
"""

import html
import re
import subprocess
import sys
import zipfile

# uniffi's generated plumbing: public in the bytecode, not meant for programs.
HIDDEN = re.compile(r"^(FfiConverter|Uniffi|Ffi|Foreign|RustBuffer|IntegrityChecking|JavaLang|NoHandle"
                    r"|InternalException|.*\$(UniffiCleanAction|DefaultImpls|ByValue|ErrorHandler)$)")


def public_classes(jar):
    names = []
    with zipfile.ZipFile(jar) as z:
        for entry in z.namelist():
            m = re.fullmatch(r"dev/idforge/([^/]+)\.class", entry)
            if m and not HIDDEN.match(m.group(1)):
                names.append("dev.idforge." + m.group(1))
    return sorted(names)


def main():
    jar, guide, version, out = sys.argv[1:5]
    classes = public_classes(jar)
    text = subprocess.run(["javap", "-public", "-cp", jar, *classes], capture_output=True,
                          text=True, check=True).stdout
    # javap prints each class after a "Compiled from" line.
    sections = [s.strip() for s in re.split(r"^Compiled from .*$", text, flags=re.M) if s.strip()]
    if len(sections) != len(classes):
        sys.exit(f"javap described {len(sections)} classes, not {len(classes)}")
    parts = [f"<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">"
             f"<title>idforge-jvm {version}</title></head><body>",
             f"<h1>idforge-jvm {version}: API</h1>",
             "<p>The public classes of package <code>dev.idforge</code> with their signatures "
             "(from the compiled jar), after the JVM guide.</p><ul>"]
    parts += [f'<li><a href="#{c}">{html.escape(c)}</a></li>' for c in classes]
    parts.append("</ul><h2>The JVM guide</h2><pre>")
    parts.append(html.escape(open(guide, encoding="utf-8").read()))
    parts.append("</pre>")
    for name, body in zip(classes, sections):
        parts.append(f'<h2 id="{name}">{html.escape(name)}</h2><pre>{html.escape(body)}</pre>')
    parts.append("</body></html>\n")
    with open(f"{out}/index.html", "w", encoding="utf-8") as f:
        f.write("\n".join(parts))
    print(f"    javadoc: {len(classes)} public classes")


if __name__ == "__main__":
    main()
