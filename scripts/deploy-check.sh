#!/usr/bin/env bash
# deploy/ as shipped, checked with the tools that will read it:
# - `nginx -t` on deploy/nginx.conf installed as docs/deploy.md says (in
#   conf.d of Debian's nginx.conf), with a self-signed pair made by openssl
#   at the certificate paths the file names (in a copy under a temp dir);
# - `systemd-analyze verify` on deploy/mds.service and an instance of
#   deploy/mds@.service, in a temp root holding the system's units and an
#   executable at the ExecStart path; any message fails (systemd only warns
#   about unknown keys);
# - the env files: only MDS_ names that `mds serve` reads (env = "…" in
#   src/cli/), and the addresses of node-1.env in nginx.conf's upstream;
# - the alert rules: `scripts/prometheus-check.sh --rules-only` (promtool
#   check rules, promtool test rules), and docs/deploy.md's Prometheus
#   configuration (`promtool check config`; it scrapes the admin addresses).
# Installs nginx, systemd and openssl from Debian if missing (needs root);
# starts no server. Usage: scripts/deploy-check.sh
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib-apt.sh
t0=$(date +%s)

apt_ensure nginx nginx-light systemd-analyze systemd openssl openssl
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

# nginx: Debian's configuration tree, copied, with ours as conf.d/mds.conf;
# every absolute path it names moved under $WORK.
cp -a /etc/nginx "$WORK/nginx"
rm -f "$WORK"/nginx/conf.d/*.conf "$WORK"/nginx/sites-enabled/*
mkdir -p "$WORK/log" "$WORK/tls"
certs=$(sed -n 's/^ *ssl_certificate\(_key\)\? \+\([^;]*\);.*/\2/p' deploy/nginx.conf)
[[ $(wc -l <<<"$certs") == 2 ]] || { echo "deploy/nginx.conf: expected ssl_certificate and ssl_certificate_key" >&2; exit 1; }
crt=$(sed -n 1p <<<"$certs")
key=$(sed -n 2p <<<"$certs")
moved() { printf '%s/tls/%s' "$WORK" "$(basename "$1")"; }
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=api.example.com \
  -keyout "$(moved "$key")" -out "$(moved "$crt")" 2>/dev/null
sed -e "s#$crt#$(moved "$crt")#; s#$key#$(moved "$key")#; s#/var/log/nginx/#$WORK/log/#g" \
  deploy/nginx.conf >"$WORK/nginx/conf.d/mds.conf"
sed -i -e "s#/etc/nginx/#$WORK/nginx/#g; s#/var/log/nginx/#$WORK/log/#g; s#/run/nginx.pid#$WORK/nginx.pid#" \
  "$WORK/nginx/nginx.conf"
grep -q "include $WORK/nginx/conf.d/\*.conf;" "$WORK/nginx/nginx.conf" \
  || { echo "Debian's nginx.conf does not include conf.d/*.conf" >&2; exit 1; }
nginx -t -q -e "$WORK/log/error.log" -c "$WORK/nginx/nginx.conf"
echo "nginx -t: deploy/nginx.conf is valid ($(nginx -v 2>&1))"

# systemd: the units in a temp root with the system's units (targets the
# units name) and a stand-in at the ExecStart path, which verify checks.
R=$WORK/root
mkdir -p "$R/etc/systemd/system" "$R/usr/lib/systemd"
cp -a /usr/lib/systemd/system "$R/usr/lib/systemd/"
cp deploy/mds.service deploy/mds@.service "$R/etc/systemd/system/"
for exe in $(sed -n 's/^ExecStart=\([^ ]*\).*/\1/p' deploy/mds.service deploy/mds@.service | sort -u); do
  mkdir -p "$R$(dirname "$exe")"
  printf '#!/bin/sh\nexit 0\n' >"$R$exe"
  chmod +x "$R$exe"
done
out=$(systemd-analyze verify --man=no --root="$R" mds.service mds@1.service 2>&1) || { echo "$out" >&2; exit 1; }
[[ -z "$out" ]] || { echo "$out" >&2; echo "systemd-analyze verify: messages above" >&2; exit 1; }
echo "systemd-analyze verify: mds.service and mds@1.service are valid ($(systemd-analyze --version | head -n 1))"

# The env files: every name one that `mds serve` (or the CLI) reads, and
# node-1.env's public address one nginx sends to.
known=$(grep -rhoE 'env = "MDS_[A-Z_]+"' src/cli | sed 's/env = "\(.*\)"/\1/' | sort -u)
known="$known"$'\n'MDS_LOG
for f in deploy/mds.env deploy/node-1.env; do
  while IFS= read -r name; do
    grep -qx "$name" <<<"$known" || { echo "$f: $name is not a setting mds reads" >&2; exit 1; }
  done < <(sed -n 's/^\([A-Z_][A-Z0-9_]*\)=.*/\1/p' "$f")
done
grep -rq '"MDS_LOG"' src/cli || { echo "src/cli no longer reads MDS_LOG" >&2; exit 1; }
listen=$(sed -n 's/^MDS_LISTEN=//p' deploy/node-1.env)
grep -q "server $listen " deploy/nginx.conf || { echo "deploy/nginx.conf has no upstream server $listen (node-1.env)" >&2; exit 1; }
echo "env files: every name is a setting of mds; node 1 is in nginx's upstream"

scripts/prometheus-check.sh --rules-only

# docs/deploy.md's Prometheus configuration: valid, with the rules file
# where it says to install it, and scraping the admin addresses the node
# files give nodes 1 to 3.
python3 - docs/deploy.md >"$WORK/prometheus.yml" <<'EOF'
import re, sys
text = open(sys.argv[1]).read()
step = text[text.index("## 10. Prometheus"):]
print(re.search(r"```yaml\n(.*?)```", step, re.S).group(1), end="")
EOF
grep -q '^  - /etc/prometheus/mds-alerts.yml$' "$WORK/prometheus.yml" \
  || { echo "docs/deploy.md: the Prometheus block loads no /etc/prometheus/mds-alerts.yml" >&2; exit 1; }
sed -i "s#/etc/prometheus/mds-alerts.yml#$PWD/deploy/prometheus/mds-alerts.yml#" "$WORK/prometheus.yml"
promtool check config "$WORK/prometheus.yml" >/dev/null
admin=$(sed -n 's/^MDS_ADMIN_LISTEN=//p' deploy/node-1.env)
want=$(for n in 1 2 3; do printf '"%s", ' "${admin%1}$n"; done)
grep -qF -- "- targets: [${want%, }]" "$WORK/prometheus.yml" \
  || { echo "docs/deploy.md: Prometheus does not scrape the admin addresses ${want%, }" >&2; exit 1; }
echo "docs/deploy.md's Prometheus configuration: valid, scraping ${want%, }"
echo "deploy check: $(( $(date +%s) - t0 )) s"
