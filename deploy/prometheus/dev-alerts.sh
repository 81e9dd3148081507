#!/usr/bin/env bash
# A real Prometheus + Alertmanager test stack for incident-bot's "alerts in" (POST /alertmanager):
# a dcgm-exporter stand-in (dcgm_exporter.py) -> Prometheus (rules.yml) -> Alertmanager -> the bot's webhook.
#
#   deploy/prometheus/dev-alerts.sh         start it (or, when it is already up, check it and print the settings;
#                                           a changed BOT_ALERT_URL rewrites alertmanager.yml and reloads it)
#   deploy/prometheus/dev-alerts.sh stop    stop Prometheus, Alertmanager and the exporter this script started
#
# Run as root (Debian 12; installs prometheus and prometheus-alertmanager with apt-get when missing). Progress
# goes to stderr; stdout is only the settings, so `eval "$(dev-alerts.sh)"` works.
# State (configs, token, pid and port files, logs, data): ${ALERTS_DEV_DIR:-/var/tmp/incident-bot-alerts}.
# Every daemon listens on 127.0.0.1 only. FOR TESTS ONLY: scrape and rule evaluation every second, group_wait
# 1s, group_interval 2s; a (re)started Prometheus or Alertmanager starts with empty data (no old silences).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
DIR=${ALERTS_DEV_DIR:-/var/tmp/incident-bot-alerts}
RUN=$DIR/run
LOG=$DIR/log
TOKEN_FILE=$DIR/token
PROM_CONF=$DIR/prometheus.yml
AM_CONF=$DIR/alertmanager.yml
RULES=$HERE/rules.yml
BOT_ALERT_URL=${BOT_ALERT_URL:-http://127.0.0.1:3999/alertmanager}
HOST=127.0.0.1
DEADLINE=${ALERTS_DEV_DEADLINE:-30} # seconds to wait for each daemon and check
START=$EPOCHREALTIME

log() { printf 'dev-alerts: %s\n' "$*" >&2; }
since() { awk -v a="$1" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }'; }
die() {
	printf 'dev-alerts: ERROR: %s\n' "$*" >&2
	exit 1
}

# pid_of WHAT PIDFILE: print the pid in PIDFILE when that process is alive and its command line contains WHAT.
pid_of() {
	local what=$1 file=$2 pid
	[[ -s $file ]] || return 1
	pid=$(tr -dc '0-9' <"$file")
	[[ -n $pid ]] && kill -0 "$pid" 2>/dev/null || return 1
	[[ $(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null) == *"$what"* ]] || return 1
	printf '%s\n' "$pid"
}

port_in_use() { ss -Hltn "sport = :$1" | grep -q .; }
free_port() {
	local port=$1
	while port_in_use "$port"; do port=$((port + 1)); done
	printf '%s\n' "$port"
}

# wait_for SECONDS WHAT COMMAND...: retry COMMAND every 0.2 s until it succeeds or the deadline passes.
wait_for() {
	local limit=$1 what=$2 t0=$EPOCHREALTIME deadline=$((SECONDS + $1))
	shift 2
	until "$@" >/dev/null 2>&1; do
		((SECONDS < deadline)) || die "$what: not ready after ${limit}s (logs: $LOG)"
		sleep 0.2
	done
	log "$what: ready after $(since "$t0")s"
}

# stop_daemon WHAT PIDFILE: SIGTERM, wait up to 15 s, then SIGKILL.
stop_daemon() {
	local pid i
	if ! pid=$(pid_of "$1" "$2"); then
		log "$1: not running"
		rm -f "$2"
		return
	fi
	log "stopping $1 (pid $pid)"
	kill -TERM "$pid" 2>/dev/null || true
	for ((i = 0; i < 150; i++)); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$pid" 2>/dev/null; then
		log "$1 (pid $pid) still running after 15s: SIGKILL"
		kill -KILL "$pid" 2>/dev/null || true
	fi
	rm -f "$2"
}

cmd_stop() {
	# Prometheus first, so that it sends nothing to an Alertmanager already gone.
	stop_daemon "prometheus --config.file=$PROM_CONF" "$RUN/prometheus.pid"
	stop_daemon prometheus-alertmanager "$RUN/alertmanager.pid"
	stop_daemon dcgm_exporter.py "$RUN/dcgm_exporter.pid"
	log "stopped (state left in $DIR)"
}

ensure_packages() {
	command -v prometheus >/dev/null && command -v prometheus-alertmanager >/dev/null &&
		command -v promtool >/dev/null && command -v amtool >/dev/null && return
	log "installing prometheus and prometheus-alertmanager (apt-get)"
	apt-get update >&2 || die "apt-get update failed"
	DEBIAN_FRONTEND=noninteractive apt-get install -y prometheus prometheus-alertmanager >&2 ||
		die "apt-get install prometheus prometheus-alertmanager failed"
}

# The Python that runs the exporter: $PYTHON, else the repository's .venv or .venv-run, with prometheus_client.
find_python() {
	local py
	for py in ${PYTHON:-} "$REPO/.venv/bin/python" "$REPO/.venv-run/bin/python" python3; do
		if [[ -n $py ]] && "$py" -c 'import prometheus_client' 2>/dev/null; then
			printf '%s\n' "$py"
			return
		fi
	done
	die "no Python with prometheus_client (make test creates .venv; or set PYTHON)"
}

# port_for NAME WANTED PIDFILE WHAT: the port a running daemon uses, else WANTED or the next free one.
port_for() {
	if pid_of "$4" "$3" >/dev/null && [[ -s $RUN/$1.port ]]; then
		cat "$RUN/$1.port"
	else
		free_port "$2"
	fi
}

# install_if_changed NEW TARGET: move NEW over TARGET when they differ; succeeds when it did.
install_if_changed() {
	if [[ -f $2 ]] && cmp -s "$1" "$2"; then
		rm -f "$1"
		return 1
	fi
	mv -f "$1" "$2"
}

ensure_token() {
	if [[ ! -s $TOKEN_FILE ]]; then
		(umask 077 && od -An -N24 -tx1 /dev/urandom | tr -d ' \n' >"$TOKEN_FILE.new")
		mv -f "$TOKEN_FILE.new" "$TOKEN_FILE"
		log "new token in $TOKEN_FILE"
	fi
	chmod 0600 "$TOKEN_FILE"
}

write_prom_conf() {
	cat >"$PROM_CONF.new" <<EOF
# Written by deploy/prometheus/dev-alerts.sh: a DEVELOPMENT/TEST Prometheus. Not for production (see prometheus.yml
# next to rules.yml). rules.yml sha256: $(sha256sum "$RULES" | cut -c1-16)
global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
rule_files:
  - $RULES
alerting:
  alertmanagers:
    - static_configs:
        - targets: ["$HOST:$AM_PORT"]
scrape_configs:
  - job_name: dcgm
    static_configs:
      - targets: ["$HOST:$DCGM_PORT"]
EOF
	promtool check config "$PROM_CONF.new" >"$LOG/promtool.log" 2>&1 ||
		die "promtool check config failed: $(cat "$LOG/promtool.log")"
	install_if_changed "$PROM_CONF.new" "$PROM_CONF"
}

write_am_conf() {
	cat >"$AM_CONF.new" <<EOF
# Written by deploy/prometheus/dev-alerts.sh: a DEVELOPMENT/TEST Alertmanager. Not for production (see
# alertmanager.yml next to rules.yml).
route:
  receiver: incident-bot
  group_by: [alertname, Hostname]
  group_wait: 1s
  group_interval: 2s
  repeat_interval: 1h
receivers:
  - name: incident-bot
    webhook_configs:
      - url: $BOT_ALERT_URL
        send_resolved: true
        max_alerts: 0
        http_config:
          authorization:
            type: Bearer
            credentials_file: $TOKEN_FILE
EOF
	amtool check-config "$AM_CONF.new" >"$LOG/amtool.log" 2>&1 ||
		die "amtool check-config failed (is BOT_ALERT_URL=$BOT_ALERT_URL a URL?): $(cat "$LOG/amtool.log")"
	install_if_changed "$AM_CONF.new" "$AM_CONF"
}

ready() { curl -sf --max-time 2 -o /dev/null "$1"; }
reload() {
	curl -sf --max-time 10 -X POST -o /dev/null "$2/-/reload" || die "$1: POST $2/-/reload failed (logs: $LOG)"
	log "$1: reloaded its configuration"
}
target_up() {
	curl -sf --max-time 2 "$PROM_URL/api/v1/query" --data-urlencode 'query=up{job="dcgm"}' |
		jq -e '.data.result[0].value[1] == "1"'
}
am_known() { curl -sf --max-time 2 "$PROM_URL/api/v1/alertmanagers" | jq -e ".data.activeAlertmanagers | length > 0"; }
am_has_url() { curl -sf --max-time 2 "$AM_URL/api/v2/status" | jq -e --arg u "$BOT_ALERT_URL" '.config.original | contains($u)'; }

start_exporter() {
	local py
	if pid_of dcgm_exporter.py "$RUN/dcgm_exporter.pid" >/dev/null; then
		log "dcgm_exporter.py: already running (:$DCGM_PORT)"
	else
		py=$(find_python)
		printf '%s\n' "$DCGM_PORT" >"$RUN/dcgm.port"
		log "starting dcgm_exporter.py on $HOST:$DCGM_PORT ($py)"
		DCGM_PORT=$DCGM_PORT setsid "$py" "$HERE/dcgm_exporter.py" </dev/null >>"$LOG/dcgm_exporter.log" 2>&1 &
		printf '%s\n' "$!" >"$RUN/dcgm_exporter.pid"
	fi
	wait_for "$DEADLINE" "dcgm_exporter.py (GET $DCGM_URL/metrics)" ready "$DCGM_URL/metrics"
}

start_prometheus() {
	local changed=$1
	if pid_of "prometheus --config.file=$PROM_CONF" "$RUN/prometheus.pid" >/dev/null; then
		log "prometheus: already running (:$PROM_PORT)"
		wait_for "$DEADLINE" "prometheus (GET /-/ready)" ready "$PROM_URL/-/ready"
		if ((changed)); then reload prometheus "$PROM_URL"; fi
	else
		rm -rf "$DIR/prometheus-data"
		printf '%s\n' "$PROM_PORT" >"$RUN/prometheus.port"
		log "starting prometheus on $HOST:$PROM_PORT (clean data)"
		setsid prometheus --config.file="$PROM_CONF" --storage.tsdb.path="$DIR/prometheus-data" \
			--storage.tsdb.retention.time=1d --web.listen-address="$HOST:$PROM_PORT" --web.enable-lifecycle \
			--web.external-url="$PROM_URL" </dev/null >>"$LOG/prometheus.log" 2>&1 &
		printf '%s\n' "$!" >"$RUN/prometheus.pid"
		wait_for "$DEADLINE" "prometheus (GET /-/ready)" ready "$PROM_URL/-/ready"
	fi
}

start_alertmanager() {
	local changed=$1
	if pid_of prometheus-alertmanager "$RUN/alertmanager.pid" >/dev/null; then
		log "alertmanager: already running (:$AM_PORT)"
		wait_for "$DEADLINE" "alertmanager (GET /-/ready)" ready "$AM_URL/-/ready"
		if ((changed)); then reload alertmanager "$AM_URL"; fi
	else
		rm -rf "$DIR/alertmanager-data"
		printf '%s\n' "$AM_PORT" >"$RUN/alertmanager.port"
		log "starting alertmanager on $HOST:$AM_PORT (clean data, no clustering)"
		setsid prometheus-alertmanager --config.file="$AM_CONF" --storage.path="$DIR/alertmanager-data" \
			--web.listen-address="$HOST:$AM_PORT" --web.external-url="$AM_URL" --cluster.listen-address= \
			</dev/null >>"$LOG/alertmanager.log" 2>&1 &
		printf '%s\n' "$!" >"$RUN/alertmanager.pid"
		wait_for "$DEADLINE" "alertmanager (GET /-/ready)" ready "$AM_URL/-/ready"
	fi
	wait_for "$DEADLINE" "alertmanager config sends to $BOT_ALERT_URL" am_has_url
}

cmd_start() {
	local am_changed=0 prom_changed=0
	ensure_packages
	command -v jq >/dev/null || die "jq is missing (apt-get install jq)"
	install -d -m 0755 "$DIR" "$RUN" "$LOG"
	ensure_token
	# Ports: a running daemon keeps its own; otherwise 9400, 9090 and 9093, or the next free ones (a
	# Prometheus or Alertmanager the system runs keeps its port; this stack takes the next).
	DCGM_PORT=$(port_for dcgm "${DCGM_PORT:-9400}" "$RUN/dcgm_exporter.pid" dcgm_exporter.py)
	PROM_PORT=$(port_for prometheus 9090 "$RUN/prometheus.pid" "prometheus --config.file=$PROM_CONF")
	AM_PORT=$(port_for alertmanager 9093 "$RUN/alertmanager.pid" prometheus-alertmanager)
	[[ $AM_PORT != "$PROM_PORT" && $AM_PORT != "$DCGM_PORT" ]] || AM_PORT=$(free_port $((AM_PORT + 1)))
	DCGM_URL=http://$HOST:$DCGM_PORT
	PROM_URL=http://$HOST:$PROM_PORT
	AM_URL=http://$HOST:$AM_PORT
	write_am_conf && am_changed=1 && log "wrote $AM_CONF (webhook $BOT_ALERT_URL)"
	write_prom_conf && prom_changed=1 && log "wrote $PROM_CONF"
	start_exporter
	start_alertmanager "$am_changed"
	start_prometheus "$prom_changed"
	wait_for "$DEADLINE" "prometheus scrapes the exporter (up{job=\"dcgm\"} == 1)" target_up
	wait_for "$DEADLINE" "prometheus knows alertmanager $AM_URL" am_known
	log "up in $(since "$START")s; logs in $LOG; alerts go to $BOT_ALERT_URL"
	cat <<EOF
export ALERTMANAGER_URL=$AM_URL
export PROMETHEUS_URL=$PROM_URL
export DCGM_EXPORTER_URL=$DCGM_URL
export ALERTMANAGER_TOKEN_FILE=$TOKEN_FILE
export ALERTS_DEV_DIR=$DIR
EOF
}

[[ $(id -u) -eq 0 ]] || die "run as root"
case ${1:-start} in
start) cmd_start ;;
stop) cmd_stop ;;
*) die "usage: $0 [start|stop]" ;;
esac
