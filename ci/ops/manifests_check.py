"""The Kubernetes manifests, rendered offline and read back (ci/ops/ops-test.sh runs this):

  python3 ci/ops/manifests_check.py IMAGE DIGEST
  python3 ci/ops/manifests_check.py --binary path/to/idforge DIGEST   (no image built)

Renders every overlay of deploy/kubernetes with `kubectl kustomize` (also through a kustomization
that pins IMAGE's DIGEST, as an operator does) and checks the objects: the StatefulSet's probes
name its ports and /healthz, its data volume is a claim template mounted at /data, no container
is privileged or runs as root, every IDFORGE_* variable and argument is a real setting of
`idforge serve` (asked of the image itself: `podman run IMAGE serve --help`), every `$(VAR)` is
defined before it, the Services, PodDisruptionBudget and NetworkPolicy select the server's pods
and name its ports, no Secret is carried in the files, and the HA overlay runs 3 servers on an
etcd store, each advertising its own name. Not applied to a cluster: none runs here.
"""

import os
import re
import subprocess
import sys
import tempfile

import yaml

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from containers import PODMAN_FLAGS  # noqa: E402

PODMAN_RUN = ["podman", "run", "--rm", *PODMAN_FLAGS]

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "deploy", "kubernetes")
OVERLAYS = ["single", "ha", "ha-tls"]


def render(path):
    out = subprocess.run(["kubectl", "kustomize", path], capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(f"kubectl kustomize {path}: {out.stderr}")
    return [d for d in yaml.safe_load_all(out.stdout) if d]


def serve_settings(image, binary=None):
    """The env variables and flags `idforge serve --help` of the image (or binary) documents."""
    command = [binary] if binary else [*PODMAN_RUN, image]
    text = subprocess.run([*command, "serve", "--help"], capture_output=True, text=True,
                          check=True).stdout
    return set(re.findall(r"\[env: (IDFORGE_[A-Z_]+)=", text)), set(re.findall(r"--[a-z-]+", text))


def matches(selector, labels):
    return bool(selector) and all(labels.get(k) == v for k, v in selector.items())


def check(name, objects, env_names, flags, digest=None):
    """The failures of one rendered overlay."""
    fail = []
    by_kind = {}
    for o in objects:
        by_kind.setdefault(o["kind"], []).append(o)
    if by_kind.get("Secret"):
        fail.append("a Secret is in the manifests: secrets are created by the operator")
    sets = by_kind.get("StatefulSet", [])
    if len(sets) != 1:
        return [f"{len(sets)} StatefulSets"]
    sts = sets[0]
    spec, pod = sts["spec"], sts["spec"]["template"]["spec"]
    labels = sts["spec"]["template"]["metadata"]["labels"]
    if not matches(spec["selector"]["matchLabels"], labels):
        fail.append("the StatefulSet's selector does not match its pods")
    psc = pod.get("securityContext", {})
    if not (psc.get("runAsNonRoot") and psc.get("runAsUser", 0) != 0):
        fail.append(f"pod securityContext runs as root: {psc}")
    claims = {c["metadata"]["name"] for c in spec.get("volumeClaimTemplates", [])}
    [c] = pod["containers"]
    sc = c.get("securityContext", {})
    if sc.get("privileged") or sc.get("allowPrivilegeEscalation", True) \
            or not sc.get("readOnlyRootFilesystem") or "ALL" not in sc.get("capabilities", {}).get("drop", []):
        fail.append(f"container securityContext too open: {sc}")
    ports = {p["name"]: p["containerPort"] for p in c.get("ports", [])}
    env = {e["name"]: e for e in c.get("env", [])}
    defined = []
    for e in c.get("env", []):
        for ref in re.findall(r"\$\((\w+)\)", e.get("value", "")):
            if ref not in defined:
                fail.append(f"{e['name']} uses $({ref}) before it is defined")
        defined.append(e["name"])
        if e["name"].startswith("IDFORGE_") and e["name"] not in env_names:
            fail.append(f"{e['name']} is not a setting of idforge serve")
    for arg in c.get("args", [])[1:]:
        if arg.startswith("--") and arg.split("=")[0] not in flags:
            fail.append(f"argument {arg} is not a flag of idforge serve")
    if c.get("args", [None])[0] != "serve":
        fail.append(f"args {c.get('args')} do not run `serve`")
    if int(env["IDFORGE_PORT"]["value"]) != ports.get("redis") \
            or int(env["IDFORGE_METRICS_PORT"]["value"]) != ports.get("metrics"):
        fail.append(f"the container ports {ports} are not the server's ports")
    ready = c.get("readinessProbe", {}).get("httpGet", {})
    if ready.get("path") != "/healthz" or ready.get("port") != "metrics":
        fail.append(f"readiness probe {ready}")
    for probe in ("livenessProbe", "startupProbe"):
        port = c.get(probe, {}).get("tcpSocket", {}).get("port")
        if port != "redis":
            fail.append(f"{probe} on {port}")
    if env.get("IDFORGE_TLS_CERT") and ready.get("scheme") != "HTTPS":
        fail.append("TLS is on but the readiness probe speaks HTTP")
    if not c.get("resources", {}).get("limits", {}).get("memory"):
        fail.append("no memory limit")
    mounts = {m["mountPath"]: m["name"] for m in c.get("volumeMounts", [])}
    if mounts.get("/data") not in claims or env["IDFORGE_DATA_DIR"]["value"] != "/data":
        fail.append(f"/data is not a claimed volume: mounts {mounts}, claims {claims}")
    volumes = {v["name"] for v in pod.get("volumes", [])} | claims
    fail += [f"mount of unknown volume {m}" for m in mounts.values() if m not in volumes]
    if digest and c["image"] != f"registry.example/idforge@{digest}":
        fail.append(f"image {c['image']} is not pinned to {digest}")
    secrets = [e["valueFrom"]["secretKeyRef"]["name"] for e in env.values()
               if "secretKeyRef" in e.get("valueFrom", {})]
    if "idforge-auth" not in secrets:
        fail.append("the password does not come from the Secret idforge-auth")
    token = env.get("IDFORGE_METRICS_TOKEN", {}).get("valueFrom", {}).get("secretKeyRef", {})
    if token.get("name") != "idforge-auth":
        fail.append("the metrics token does not come from the Secret idforge-auth (in protected "
                    "mode /metrics answers only the pod itself without one)")
    if "IDFORGE_INSECURE_OPEN" in env:
        fail.append("the server is opened to every host without a password (IDFORGE_INSECURE_OPEN)")
    for svc in by_kind.get("Service", []):
        if not matches(svc["spec"].get("selector"), labels):
            fail.append(f"Service {svc['metadata']['name']} does not select the server's pods")
        for p in svc["spec"]["ports"]:
            if p["targetPort"] not in ports:
                fail.append(f"Service {svc['metadata']['name']} targets unknown port {p['targetPort']}")
    if sts["spec"]["serviceName"] not in {s["metadata"]["name"] for s in by_kind.get("Service", [])
                                          if s["spec"].get("clusterIP") == "None"}:
        fail.append("the StatefulSet's serviceName is not a headless Service")
    for pdb in by_kind.get("PodDisruptionBudget", []) or [None]:
        if pdb is None or not matches(pdb["spec"]["selector"]["matchLabels"], labels):
            fail.append("no PodDisruptionBudget selecting the server's pods")
    for np in by_kind.get("NetworkPolicy", []) or [None]:
        if np is None or not matches(np["spec"]["podSelector"]["matchLabels"], labels):
            fail.append("no NetworkPolicy selecting the server's pods")
            continue
        for rule in np["spec"]["ingress"]:
            fail += [f"NetworkPolicy names unknown port {p['port']}" for p in rule["ports"]
                     if p["port"] not in ports]
    if name.startswith("ha"):
        if spec.get("replicas") != 3:
            fail.append(f"HA runs {spec.get('replicas')} servers")
        # The store URL from its parts, as Kubernetes expands $(VAR): etcd's user and password
        # from a Secret (required), the members from the ConfigMap; each defined before it.
        store = env.get("IDFORGE_STORE", {}).get("value", "")
        if store != "etcd://$(ETCD_USERNAME):$(ETCD_PASSWORD)@$(ETCD_MEMBERS)":
            fail.append(f"HA store {store!r} is not etcd with credentials from a Secret")
        order = [e["name"] for e in c.get("env", [])]
        for part in ("ETCD_USERNAME", "ETCD_PASSWORD"):
            ref = env.get(part, {}).get("valueFrom", {}).get("secretKeyRef", {})
            if ref.get("name") != "idforge-etcd" or ref.get("optional"):
                fail.append(f"{part} does not come from the Secret idforge-etcd (required)")
        ref = env.get("ETCD_MEMBERS", {}).get("valueFrom", {}).get("configMapKeyRef", {})
        maps = {m["metadata"]["name"]: m for m in by_kind.get("ConfigMap", [])}
        members = maps.get(ref.get("name"), {}).get("data", {}).get(ref.get("key"), "")
        if not members or "://" in members or "@" in members:
            fail.append(f"HA etcd members {members!r} are not host:port[,…][/prefix]")
        if any(p not in order or order.index(p) > order.index("IDFORGE_STORE")
               for p in ("ETCD_USERNAME", "ETCD_PASSWORD", "ETCD_MEMBERS") if "IDFORGE_STORE" in order):
            fail.append("the store URL's parts are not defined before IDFORGE_STORE")
        advertise = env.get("IDFORGE_ADVERTISE", {}).get("value", "")
        if not advertise.startswith(f"$(POD_NAME).{spec['serviceName']}."):
            fail.append(f"HA advertise {advertise!r} is not the pod's own name")
    elif spec.get("replicas") != 1 or "IDFORGE_STORE" in env:
        fail.append("the single overlay is not one server on its own SQLite store")
    return fail


def main():
    if sys.argv[1] == "--binary":
        binary, digest = sys.argv[2:4]
        env_names, flags = serve_settings(None, binary)
    else:
        image, digest = sys.argv[1:3]
        env_names, flags = serve_settings(image)
    failures = []
    for name in OVERLAYS:
        path = os.path.join(ROOT, "overlays", name)
        objects = render(path)
        failures += [f"{name}: {f}" for f in check(name, objects, env_names, flags)]
        # As an operator pins the release: a kustomization over the overlay with the digest.
        with tempfile.TemporaryDirectory() as tmp:
            with open(os.path.join(tmp, "kustomization.yaml"), "w") as f:
                yaml.safe_dump({"resources": [os.path.relpath(path, tmp)],
                                "images": [{"name": "idforge", "newName": "registry.example/idforge",
                                            "digest": digest}]}, f)
            pinned = render(tmp)
        failures += [f"{name} pinned: {f}" for f in check(name, pinned, env_names, flags, digest)]
        print(f"{name}: {len(objects)} objects ({', '.join(sorted({o['kind'] for o in objects}))})",
              flush=True)
    for f in failures:
        print(f"FAIL: {f}", file=sys.stderr)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
