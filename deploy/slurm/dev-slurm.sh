#!/usr/bin/env bash
# A real one-host Slurm cluster (slurmctld, slurmd, slurmrestd; Slurm 22.05) for incident-bot's tests.
#
#   deploy/slurm/dev-slurm.sh         start it (or, when it is already up, check it and print the settings)
#   deploy/slurm/dev-slurm.sh stop    stop slurmrestd, slurmd and slurmctld started from the state directory
#
# Run as root. Progress goes to stderr; stdout is only the settings, so `eval "$(dev-slurm.sh)"` works.
# State (slurm.conf, spool, logs, pid files, JWT key, token): ${SLURM_DEV_DIR:-/var/tmp/incident-bot-slurm}.
# FOR TESTS ONLY: SlurmUser=root, no accounting, and gpu-a[18-20] are fake nodes with no slurmd behind them.
set -euo pipefail

DIR=${SLURM_DEV_DIR:-/var/tmp/incident-bot-slurm}
CONF=$DIR/slurm.conf
RUN=$DIR/run
LOG=$DIR/log
JWT_KEY=$DIR/jwt_hs256.key
TOKEN_FILE=$DIR/token
REST_PID=$RUN/slurmrestd.pid
REST_HOST=127.0.0.1
REST_API=v0.0.38
REST_SYSUSER=slurmrest         # the unprivileged account slurmrestd runs as (it refuses root and SlurmUser)
REST_USER=root                 # the Slurm user the token is for: root, so tests may drain and resume nodes
TOKEN_LIFESPAN=86400
DEADLINE=60                    # seconds to wait for each daemon to come up
HOST=$(hostname)
START=$EPOCHREALTIME
STARTED=0                      # set to 1 when this run started slurmctld or slurmd

log() { printf 'dev-slurm: %s\n' "$*" >&2; }
# since T0: seconds since the $EPOCHREALTIME value T0, to a tenth of a second.
since() { awk -v a="$1" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }'; }
die() {
	printf 'dev-slurm: ERROR: %s\n' "$*" >&2
	exit 1
}

# pid_of NAME PIDFILE: print the pid in PIDFILE when that process is alive and is NAME, else fail.
pid_of() {
	local name=$1 file=$2 pid comm
	[[ -s $file ]] || return 1
	pid=$(tr -dc '0-9' <"$file")
	[[ -n $pid ]] && kill -0 "$pid" 2>/dev/null || return 1
	comm=$(cat "/proc/$pid/comm" 2>/dev/null) || return 1
	[[ $comm == "$name" ]] || return 1
	printf '%s\n' "$pid"
}

port_in_use() { ss -Hltn "sport = :$1" | grep -q .; }

# free_port WANTED: WANTED when nothing listens on it, else the next free port above it.
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
		if ((SECONDS >= deadline)); then
			die "$what: not ready after ${limit}s (logs: $LOG)"
		fi
		sleep 0.2
	done
	log "$what: ready after $(since "$t0")s"
}

# stop_daemons NAME PIDFILE [NAME PIDFILE...]: SIGTERM each running one, wait for all (15 s), then SIGKILL.
stop_daemons() {
	local pids=() pid i
	while (($# >= 2)); do
		if pid=$(pid_of "$1" "$2"); then
			log "stopping $1 (pid $pid)"
			kill -TERM "$pid" 2>/dev/null || true
			pids+=("$pid")
		else
			log "$1: not running"
		fi
		rm -f "$2"
		shift 2
	done
	for pid in "${pids[@]}"; do
		for ((i = 0; i < 75; i++)); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.2
		done
		if kill -0 "$pid" 2>/dev/null; then
			log "pid $pid still running after 15s: SIGKILL"
			kill -KILL "$pid" 2>/dev/null || true
		fi
	done
}

cmd_stop() {
	local t0=$EPOCHREALTIME
	stop_daemons slurmrestd "$REST_PID" slurmd "$RUN/slurmd.pid" slurmctld "$RUN/slurmctld.pid"
	log "stopped in $(since "$t0")s (munged left running)"
}

ensure_munge() {
	if [[ ! -s /etc/munge/munge.key ]]; then
		log "creating /etc/munge/munge.key"
		install -d -o munge -g munge -m 0700 /etc/munge
		dd if=/dev/urandom of=/etc/munge/munge.key bs=1024 count=1 status=none
	fi
	chown munge:munge /etc/munge/munge.key
	chmod 0400 /etc/munge/munge.key
	if ! pgrep -x munged >/dev/null; then
		log "starting munged"
		install -d -o munge -g munge -m 0755 /run/munge
		install -d -o munge -g munge -m 0700 /var/lib/munge /var/log/munge
		runuser -u munge -- /usr/sbin/munged || /usr/sbin/munged --force
	fi
	munge -n | unmunge >/dev/null || die "munge -n | unmunge fails: see /var/log/munge/munged.log"
	log "munge: ok"
}

ensure_rest_sysuser() {
	if ! id -u "$REST_SYSUSER" >/dev/null 2>&1; then
		log "creating system user $REST_SYSUSER"
		useradd --system --user-group --no-create-home --home-dir /nonexistent \
			--shell /usr/sbin/nologin "$REST_SYSUSER"
	fi
}

write_conf() {
	local cpus mem ctld_port slurmd_port fake_port
	cpus=$(nproc)
	# RealMemory a bit under what the host has: 95% of MemTotal in MB.
	mem=$(awk '/^MemTotal:/ { printf "%d", $2 / 1024 * 0.95 }' /proc/meminfo)
	ctld_port=$(free_port 6817)
	slurmd_port=$(free_port 6818)
	[[ $slurmd_port != "$ctld_port" ]] || slurmd_port=$(free_port $((ctld_port + 1)))
	# The fake nodes get a port where nothing listens, so pings to them fail fast (connection refused)
	# and never reach the real slurmd (which listens on all addresses, 127.0.0.2 included).
	fake_port=$(free_port 6899)
	install -d -m 0755 "$DIR" "$RUN" "$LOG"
	install -d -m 0700 "$DIR/spool" "$DIR/spool/ctld" "$DIR/spool/d"
	if [[ ! -s $JWT_KEY ]]; then
		log "creating the JWT key $JWT_KEY"
		(umask 077 && dd if=/dev/urandom of="$JWT_KEY" bs=32 count=1 status=none)
	fi
	chown root:root "$JWT_KEY"
	chmod 0600 "$JWT_KEY"
	log "writing $CONF (slurmctld :$ctld_port, slurmd :$slurmd_port, $cpus CPUs, ${mem} MB)"
	cat >"$CONF.new" <<EOF
# Written by deploy/slurm/dev-slurm.sh: a one-host DEVELOPMENT/TEST cluster for incident-bot. Not for production.
ClusterName=incidentbot
SlurmctldHost=$HOST
# SlurmUser=root is acceptable here only because this is a throwaway dev cluster on one host.
SlurmUser=root
SlurmdUser=root
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
AuthType=auth/munge
CredType=cred/munge
AuthAltTypes=auth/jwt
AuthAltParameters=jwt_key=$JWT_KEY
StateSaveLocation=$DIR/spool/ctld
SlurmdSpoolDir=$DIR/spool/d
SlurmctldPidFile=$RUN/slurmctld.pid
SlurmdPidFile=$RUN/slurmd.pid
SlurmctldLogFile=$LOG/slurmctld.log
SlurmdLogFile=$LOG/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
MailProg=/bin/true
# No systemd or cgroups needed (containers, gVisor).
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
SwitchType=switch/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
SlurmctldTimeout=30
SlurmdTimeout=30
MessageTimeout=5
InactiveLimit=0
KillWait=5
MinJobAge=300
Waittime=0
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
# gpu-a17 is this host and runs slurmd. gpu-a[18-20] are FAKE (tests only): no slurmd answers for them, so
# they show as unknown/down (not responding), and can still be drained and resumed with scontrol.
NodeName=gpu-a17 NodeHostname=$HOST CPUs=$cpus RealMemory=$mem State=UNKNOWN
NodeName=gpu-a[18-20] NodeHostname=127.0.0.2 NodeAddr=127.0.0.2 Port=$fake_port CPUs=1 RealMemory=1000 State=UNKNOWN
PartitionName=gpu Nodes=gpu-a[17-20] Default=YES MaxTime=INFINITE State=UP
EOF
	chmod 0644 "$CONF.new"
	mv -f "$CONF.new" "$CONF"
}

slurmctld_up() { scontrol ping 2>/dev/null | grep -q 'is UP'; }
node_state() { sinfo -h -N -n gpu-a17 -o %T 2>/dev/null; }
node_idle() { [[ $(node_state) == idle ]]; }
# Responding: a state without the trailing "*" that sinfo gives a node that does not answer.
node_responding() {
	local state
	state=$(node_state)
	[[ -n $state && $state != *'*' ]]
}

rest_get() {
	curl -sf --max-time 5 -H "X-SLURM-USER-NAME: $REST_USER" -H "X-SLURM-USER-TOKEN: $(cat "$TOKEN_FILE")" \
		"http://$REST_HOST:$(cat "$RUN/slurmrestd.port")/slurm/$REST_API/$1"
}
rest_has_node() { rest_get nodes | jq -e '[.nodes[].name] | index("gpu-a17") != null' >/dev/null; }

new_token() {
	local out
	out=$(scontrol token username="$REST_USER" lifespan="$TOKEN_LIFESPAN") || die "scontrol token failed"
	(umask 077 && printf '%s\n' "${out#SLURM_JWT=}" >"$TOKEN_FILE.new")
	mv -f "$TOKEN_FILE.new" "$TOKEN_FILE"
	log "new token for $REST_USER (lifespan ${TOKEN_LIFESPAN}s) in $TOKEN_FILE"
}

start_slurmctld() {
	if pid_of slurmctld "$RUN/slurmctld.pid" >/dev/null; then
		log "slurmctld: already running"
	else
		# Stop whatever is left over from a half-started cluster before the config changes under it.
		stop_daemons slurmrestd "$REST_PID" slurmd "$RUN/slurmd.pid" 2>/dev/null
		write_conf
		# -c: no state from an earlier run (jobs, drained nodes): every start is a clean cluster.
		log "starting slurmctld (clean state)"
		STARTED=1
		slurmctld -c -f "$CONF" || die "slurmctld failed to start (see $LOG/slurmctld.log)"
	fi
	wait_for "$DEADLINE" "slurmctld (scontrol ping)" slurmctld_up
}

start_slurmd() {
	if pid_of slurmd "$RUN/slurmd.pid" >/dev/null; then
		log "slurmd: already running"
	else
		log "starting slurmd for gpu-a17"
		STARTED=1
		slurmd -f "$CONF" -N gpu-a17 || die "slurmd failed to start (see $LOG/slurmd.log)"
	fi
	if ((STARTED)); then
		wait_for "$DEADLINE" "gpu-a17 idle (sinfo)" node_idle
	else
		# Already up: tests may have drained gpu-a17 or left jobs on it; it only has to answer.
		wait_for "$DEADLINE" "gpu-a17 responding (sinfo)" node_responding
		log "gpu-a17 is $(node_state)"
	fi
}

check_job() {
	local out t0=$EPOCHREALTIME
	out=$(timeout 30 srun -N1 -w gpu-a17 --time=1 hostname 2>&1) || die "srun on gpu-a17 failed: $out"
	[[ $out == "$HOST" ]] || die "srun on gpu-a17 printed '$out', expected '$HOST'"
	log "srun -w gpu-a17 hostname: $out ($(since "$t0")s)"
}

start_slurmrestd() {
	local port
	ensure_rest_sysuser
	if pid_of slurmrestd "$REST_PID" >/dev/null; then
		log "slurmrestd: already running"
	else
		port=$(free_port 6820)
		printf '%s\n' "$port" >"$RUN/slurmrestd.port"
		log "starting slurmrestd on $REST_HOST:$port as $REST_SYSUSER"
		# SLURM_JWT=daemon: slurmrestd uses each request's token and needs neither munge nor the JWT key.
		SLURM_JWT=daemon setsid slurmrestd -f "$CONF" -a rest_auth/jwt -s "openapi/$REST_API" \
			-u "$REST_SYSUSER" -g "$REST_SYSUSER" "$REST_HOST:$port" \
			</dev/null >>"$LOG/slurmrestd.log" 2>&1 &
		printf '%s\n' "$!" >"$REST_PID"
	fi
	# A token younger than half its lifespan is kept; otherwise (or when it is refused) a new one is made.
	if [[ ! -s $TOKEN_FILE ]] || [[ -n $(find "$TOKEN_FILE" -mmin +$((TOKEN_LIFESPAN / 120))) ]]; then
		new_token
	fi
	wait_for "$DEADLINE" "slurmrestd (GET /slurm/$REST_API/ping)" rest_get ping
	if ! rest_has_node; then
		new_token
		rest_has_node || die "GET /slurm/$REST_API/nodes does not list gpu-a17: $(rest_get nodes 2>&1 | head -c 500)"
	fi
	pid_of slurmrestd "$REST_PID" >/dev/null || die "slurmrestd exited (see $LOG/slurmrestd.log)"
	log "REST: /slurm/$REST_API/nodes lists gpu-a17"
}

cmd_start() {
	ensure_munge
	export SLURM_CONF=$CONF
	start_slurmctld
	start_slurmd
	# A test job only after a (re)start, so that a second run leaves no job behind in the job list.
	((STARTED == 0)) || check_job
	start_slurmrestd
	log "up in $(since "$START")s; logs in $LOG"
	cat <<EOF
export SLURM_CONF=$CONF
export SLURM_CLI=true
export SLURM_REST_URL=http://$REST_HOST:$(cat "$RUN/slurmrestd.port")
export SLURM_REST_USER=$REST_USER
export SLURM_TOKEN_FILE=$TOKEN_FILE
EOF
}

[[ $(id -u) -eq 0 ]] || die "run as root"
case ${1:-start} in
start) cmd_start ;;
stop) cmd_stop ;;
*) die "usage: $0 [start|stop]" ;;
esac
