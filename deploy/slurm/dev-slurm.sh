#!/usr/bin/env bash
# A real one-host Slurm cluster (slurmctld, slurmd, slurmrestd, slurmdbd + MariaDB; Slurm 22.05) for
# incident-bot's tests.
#
#   deploy/slurm/dev-slurm.sh         start it (or, when it is already up, check it and print the settings)
#   deploy/slurm/dev-slurm.sh stop    stop slurmrestd, slurmd, slurmctld, slurmdbd and the MariaDB this script
#                                     started (never the machine's own MariaDB), all from the state directory
#
# Run as root. Progress goes to stderr; stdout is only the settings, so `eval "$(dev-slurm.sh)"` works.
# State (slurm.conf, slurmdbd.conf, spool, logs, pid files, JWT key, token, private MariaDB):
# ${SLURM_DEV_DIR:-/var/tmp/incident-bot-slurm}.
# Accounting: slurmdbd on a MariaDB database slurm_acct_db: the machine's MariaDB when it answers as root on
# its socket, else a private mariadbd in the state directory (SLURM_DEV_DB=system|private forces one).
# Slurm users: root and incident-bot (adminlevel=Administrator: the lowest level that may drain or resume a
# node in Slurm 22.05, whose UPDATE_NODE RPC checks validate_super_user; Operator is refused with "Invalid
# user id"), both in account ops; nobody-slurm (adminlevel=None), a plain user whose node updates are
# refused, for tests. incident-bot is not root and not SlurmUser.
# FOR TESTS ONLY: SlurmUser=root, and gpu-a[18-20] are fake nodes with no slurmd behind them.
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
CLUSTER=incidentbot
ACCOUNT=ops
OPERATOR_USER=incident-bot     # Unix system user and Slurm user with adminlevel=$OPERATOR_LEVEL
# Operator may cancel others' jobs and create reservations, but NOT drain or resume nodes: in Slurm 22.05
# UPDATE_NODE needs root, SlurmUser or Administrator ("slurm_update error: Invalid user id" otherwise), so
# the bot's user is an Administrator: the least Slurm grants that lets it drain (docs/operating/nodes.md).
OPERATOR_LEVEL=Administrator
PLAIN_USER=nobody-slurm        # Unix system user and Slurm user with adminlevel=None: refused node updates
DBD_CONF=$DIR/slurmdbd.conf    # slurmdbd reads slurmdbd.conf from the directory of $SLURM_CONF
DBD_PID=$RUN/slurmdbd.pid
SACCTMGR_LOG=$LOG/sacctmgr.log # what the sacctmgr commands that add or modify print
DB_NAME=slurm_acct_db
DB_USER=slurm
DB_MODE=${SLURM_DEV_DB:-auto}  # auto: the machine's MariaDB when it answers, else a private one
SYS_DB_SOCK=/run/mysqld/mysqld.sock
MY_DIR=$DIR/mysql              # the private MariaDB: datadir, socket, pid file, log
MY_SOCK=$MY_DIR/mysqld.sock
MY_PID=$RUN/mariadbd.pid
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
	local pids=() pid i t0=$EPOCHREALTIME
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
		for ((i = 0; i < 150; i++)); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		if kill -0 "$pid" 2>/dev/null; then
			log "pid $pid still running after 15s: SIGKILL"
			kill -KILL "$pid" 2>/dev/null || true
		fi
	done
	((${#pids[@]} == 0)) || log "stopped pid ${pids[*]} after $(since "$t0")s"
}

cmd_stop() {
	local t0=$EPOCHREALTIME
	# slurmdbd with the others: what slurmctld still holds for it needs not reach the database, as the next
	# clean start drops it. The private MariaDB last.
	stop_daemons slurmrestd "$REST_PID" slurmd "$RUN/slurmd.pid" slurmctld "$RUN/slurmctld.pid" slurmdbd "$DBD_PID"
	stop_daemons mariadbd "$MY_PID"
	log "stopped in $(since "$t0")s (munged and the machine's own MariaDB, if used, left running)"
}

# The packages that accounting needs (Debian 12): slurmdbd (which brings slurm-wlm-mysql-plugin) and
# mariadb-server. Installed only when missing.
ensure_packages() {
	if command -v slurmdbd >/dev/null && command -v mariadbd >/dev/null && command -v mariadb >/dev/null &&
		[[ -e /usr/lib/x86_64-linux-gnu/slurm-wlm/accounting_storage_mysql.so ||
			-n $(find /usr/lib -name accounting_storage_mysql.so -print -quit 2>/dev/null) ]]; then
		return
	fi
	log "installing slurmdbd and mariadb-server (apt-get)"
	apt-get update >&2 || die "apt-get update failed"
	DEBIAN_FRONTEND=noninteractive apt-get install -y mariadb-server slurmdbd >&2 ||
		die "apt-get install mariadb-server slurmdbd failed"
}

# ensure_sysuser NAME: a system user with no login and no home, created when missing.
ensure_sysuser() {
	if ! id -u "$1" >/dev/null 2>&1; then
		log "creating system user $1"
		useradd --system --user-group --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin "$1"
	fi
}

ensure_jwt_key() {
	install -d -m 0755 "$DIR" "$RUN" "$LOG"
	if [[ ! -s $JWT_KEY ]]; then
		log "creating the JWT key $JWT_KEY"
		(umask 077 && dd if=/dev/urandom of="$JWT_KEY" bs=32 count=1 status=none)
	fi
	chown root:root "$JWT_KEY"
	chmod 0600 "$JWT_KEY"
}

# sql STATEMENTS: run them as MariaDB's root on the socket in use ($DB_SOCK).
sql() { mariadb --protocol=socket -S "$DB_SOCK" -uroot -N -B -e "$1"; }
sys_db_answers() { mariadb --protocol=socket -S "$SYS_DB_SOCK" -uroot -N -B -e 'SELECT 1' >/dev/null 2>&1; }
my_db_answers() { mariadb --protocol=socket -S "$MY_SOCK" -uroot -N -B -e 'SELECT 1' >/dev/null 2>&1; }

# The database for slurmdbd: sets DB_SOCK, DB_PORT (slurmdbd talks TCP to 127.0.0.1:$DB_PORT) and DB_WHICH.
ensure_mariadb() {
	local port
	if [[ $DB_MODE != private ]] && ! pid_of mariadbd "$MY_PID" >/dev/null && sys_db_answers; then
		DB_WHICH="the machine's MariaDB ($SYS_DB_SOCK)"
		DB_SOCK=$SYS_DB_SOCK
	elif [[ $DB_MODE == system ]]; then
		die "SLURM_DEV_DB=system, but no MariaDB answers as root on $SYS_DB_SOCK"
	else
		DB_WHICH="a private MariaDB ($MY_DIR)"
		DB_SOCK=$MY_SOCK
		if ! pid_of mariadbd "$MY_PID" >/dev/null; then
			install -d -m 0700 "$MY_DIR"
			if [[ ! -d $MY_DIR/data/mysql ]]; then
				log "initialising a private MariaDB in $MY_DIR/data"
				mariadb-install-db --no-defaults --user=root --datadir="$MY_DIR/data" --skip-test-db \
					--auth-root-authentication-method=socket >"$LOG/mariadb-install.log" 2>&1 ||
					die "mariadb-install-db failed (see $LOG/mariadb-install.log)"
			fi
			port=$(free_port 3307)
			log "starting a private mariadbd on 127.0.0.1:$port"
			setsid mariadbd --no-defaults --user=root --datadir="$MY_DIR/data" --socket="$MY_SOCK" \
				--port="$port" --bind-address=127.0.0.1 --pid-file="$MY_DIR/mariadbd.pid" \
				--log-error="$LOG/mariadb.log" --innodb-buffer-pool-size=256M --innodb-lock-wait-timeout=900 \
				</dev/null >>"$LOG/mariadb.log" 2>&1 &
			printf '%s\n' "$!" >"$MY_PID"
			wait_for "$DEADLINE" "private mariadbd (socket $MY_SOCK)" my_db_answers
		fi
	fi
	DB_PORT=$(sql 'SELECT @@port') || die "cannot ask $DB_WHICH for its port"
	log "accounting database: $DB_WHICH, 127.0.0.1:$DB_PORT"
}

# conf_value FILE KEY: the value of KEY=... in FILE (empty when absent).
conf_value() {
	[[ -s $1 ]] || return 0
	awk -F= -v k="$2" '$1 == k { v = $2 } END { print v }' "$1"
}

dbd_up() { sacctmgr -n -P show cluster format=cluster >/dev/null; }

# slurmdbd, with its database and DB user: started unless its pid file names a running one.
ensure_slurmdbd() {
	local pass port
	if pid_of slurmdbd "$DBD_PID" >/dev/null; then
		DBD_PORT=$(conf_value "$DBD_CONF" DbdPort)
		log "slurmdbd: already running (:$DBD_PORT)"
		return
	fi
	pass=$(conf_value "$DBD_CONF" StoragePass)
	[[ -n $pass ]] || pass=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
	# A fresh database at each clean start (slurmctld not running), as slurmctld -c forgets all jobs: sacct
	# then lists only the jobs of this cluster's run.
	if ! pid_of slurmctld "$RUN/slurmctld.pid" >/dev/null; then
		sql "DROP DATABASE IF EXISTS $DB_NAME" || die "cannot drop $DB_NAME in $DB_WHICH"
	fi
	sql "CREATE DATABASE IF NOT EXISTS $DB_NAME;
		CREATE USER IF NOT EXISTS '$DB_USER'@'localhost' IDENTIFIED BY '$pass';
		CREATE USER IF NOT EXISTS '$DB_USER'@'127.0.0.1' IDENTIFIED BY '$pass';
		ALTER USER '$DB_USER'@'localhost' IDENTIFIED BY '$pass';
		ALTER USER '$DB_USER'@'127.0.0.1' IDENTIFIED BY '$pass';
		GRANT ALL ON $DB_NAME.* TO '$DB_USER'@'localhost';
		GRANT ALL ON $DB_NAME.* TO '$DB_USER'@'127.0.0.1';" || die "cannot set up $DB_NAME in $DB_WHICH"
	# Its port: the one slurm.conf already names while slurmctld runs, else 6819 or the next free one.
	port=$(conf_value "$CONF" AccountingStoragePort)
	if [[ -z $port ]] || ! pid_of slurmctld "$RUN/slurmctld.pid" >/dev/null; then
		port=$(free_port 6819)
	fi
	DBD_PORT=$port
	log "writing $DBD_CONF (slurmdbd :$DBD_PORT)"
	(umask 077 && cat >"$DBD_CONF.new") <<EOF
# Written by deploy/slurm/dev-slurm.sh: slurmdbd for the DEVELOPMENT/TEST cluster $CLUSTER. Not for production.
DbdHost=localhost
DbdPort=$DBD_PORT
SlurmUser=root
AuthType=auth/munge
AuthAltTypes=auth/jwt
AuthAltParameters=jwt_key=$JWT_KEY
StorageType=accounting_storage/mysql
StorageHost=127.0.0.1
StoragePort=$DB_PORT
StorageUser=$DB_USER
StoragePass=$pass
StorageLoc=$DB_NAME
PidFile=$DBD_PID
LogFile=$LOG/slurmdbd.log
DebugLevel=info
EOF
	chown root:root "$DBD_CONF.new"
	chmod 0600 "$DBD_CONF.new"
	mv -f "$DBD_CONF.new" "$DBD_CONF"
	log "starting slurmdbd"
	slurmdbd || die "slurmdbd failed to start (see $LOG/slurmdbd.log)"
}

# ensure_slurm_user NAME ADMINLEVEL ASSOCS USERS: NAME in account ops with that admin level; ASSOCS and USERS
# are what `sacctmgr -n -P show assoc ... format=account,user` and `show user format=user,adminlevel` printed.
ensure_slurm_user() {
	local name=$1 level=$2 have
	if ! grep -qxF "$ACCOUNT|$name" <<<"$3"; then
		log "sacctmgr: adding user $name to account $ACCOUNT (adminlevel=$level)"
		sacctmgr -i add user "$name" account="$ACCOUNT" cluster="$CLUSTER" adminlevel="$level" \
			>>"$SACCTMGR_LOG" || die "sacctmgr add user $name failed (see $SACCTMGR_LOG)"
		return
	fi
	have=$(awk -F'|' -v u="$name" '$1 == u { print $2 }' <<<"$4")
	if [[ $have != "$level" ]]; then
		log "sacctmgr: user $name has adminlevel '$have': setting $level"
		sacctmgr -i modify user where name="$name" set adminlevel="$level" >>"$SACCTMGR_LOG" ||
			die "sacctmgr modify user $name failed (see $SACCTMGR_LOG)"
	fi
}

# The cluster, account ops and the users, each added only when missing (so a second run adds nothing and
# asks sacctmgr only three questions).
ensure_associations() {
	local assocs users
	if ! grep -qxF "$CLUSTER" <<<"$(sacctmgr -n -P show cluster format=cluster)"; then
		log "sacctmgr: adding cluster $CLUSTER"
		sacctmgr -i add cluster "$CLUSTER" >>"$SACCTMGR_LOG" ||
			die "sacctmgr add cluster $CLUSTER failed (see $SACCTMGR_LOG)"
	fi
	assocs=$(sacctmgr -n -P show assoc where cluster="$CLUSTER" format=account,user)
	if ! grep -qxF "$ACCOUNT|" <<<"$assocs"; then
		log "sacctmgr: adding account $ACCOUNT"
		sacctmgr -i add account "$ACCOUNT" cluster="$CLUSTER" description="incident-bot tests" \
			organization=incidentbot >>"$SACCTMGR_LOG" || die "sacctmgr add account $ACCOUNT failed (see $SACCTMGR_LOG)"
	fi
	users=$(sacctmgr -n -P show user format=user,adminlevel)
	# root keeps adminlevel Administrator, which sacctmgr gives it with the cluster.
	ensure_slurm_user root Administrator "$assocs" "$users"
	ensure_slurm_user "$OPERATOR_USER" "$OPERATOR_LEVEL" "$assocs" "$users"
	ensure_slurm_user "$PLAIN_USER" None "$assocs" "$users"
	log "accounting: cluster $CLUSTER, account $ACCOUNT; $OPERATOR_USER is $OPERATOR_LEVEL, $PLAIN_USER is None"
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
	ensure_jwt_key
	log "writing $CONF (slurmctld :$ctld_port, slurmd :$slurmd_port, slurmdbd :$DBD_PORT, $cpus CPUs, ${mem} MB)"
	cat >"$CONF.new" <<EOF
# Written by deploy/slurm/dev-slurm.sh: a one-host DEVELOPMENT/TEST cluster for incident-bot. Not for production.
ClusterName=$CLUSTER
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
# Accounting through slurmdbd (sacct, sacctmgr, admin levels such as Operator). Not enforced: jobs of users
# without an association still run.
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=localhost
AccountingStoragePort=$DBD_PORT
JobAcctGatherType=jobacct_gather/linux
JobAcctGatherFrequency=30
JobCompType=jobcomp/none
# gpu-a17 is this host and runs slurmd. gpu-a[18-20] are FAKE (tests only): no slurmd answers for them, so
# they show as unknown* (not responding), and can still be drained with scontrol.
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
# Any HTTP answer at all (no token needed): slurmrestd is listening.
rest_answers() { curl -s -o /dev/null --max-time 5 "http://$REST_HOST:$(cat "$RUN/slurmrestd.port")/openapi"; }
rest_has_node() { rest_get nodes | jq -e '[.nodes[].name] | index("gpu-a17") != null' >/dev/null; }

new_token() {
	local out
	out=$(scontrol token username="$REST_USER" lifespan="$TOKEN_LIFESPAN") || die "scontrol token failed"
	(umask 077 && printf '%s\n' "${out#SLURM_JWT=}" >"$TOKEN_FILE.new")
	mv -f "$TOKEN_FILE.new" "$TOKEN_FILE"
	log "new token for $REST_USER (lifespan ${TOKEN_LIFESPAN}s) in $TOKEN_FILE"
}

# A slurmctld started by an older version of this script, without accounting, is stopped (and then started
# again by start_slurmctld with the new slurm.conf).
stop_if_no_accounting() {
	if pid_of slurmctld "$RUN/slurmctld.pid" >/dev/null && ! grep -qx 'AccountingStorageType=accounting_storage/slurmdbd' "$CONF"; then
		log "the running cluster has no accounting: restarting it"
		stop_daemons slurmrestd "$REST_PID" slurmd "$RUN/slurmd.pid" slurmctld "$RUN/slurmctld.pid"
	fi
}

# slurm.conf for a clean start (it needs $DBD_PORT, so after ensure_slurmdbd; sacctmgr reads it too).
prepare_conf() {
	if ! pid_of slurmctld "$RUN/slurmctld.pid" >/dev/null; then
		# Stop whatever is left over from a half-started cluster before the config changes under it.
		stop_daemons slurmrestd "$REST_PID" slurmd "$RUN/slurmd.pid" 2>/dev/null
		write_conf
	fi
}

start_slurmctld() {
	if pid_of slurmctld "$RUN/slurmctld.pid" >/dev/null; then
		log "slurmctld: already running"
	else
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
		# SLURM_JWT=daemon: slurmrestd passes each request's token on to slurmctld (it cannot read the
		# JWT key, and needs not).
		SLURM_JWT=daemon setsid slurmrestd -f "$CONF" -a rest_auth/jwt -s "openapi/$REST_API" \
			-u "$REST_SYSUSER" -g "$REST_SYSUSER" "$REST_HOST:$port" \
			</dev/null >>"$LOG/slurmrestd.log" 2>&1 &
		printf '%s\n' "$!" >"$REST_PID"
	fi
	# A token younger than half its lifespan is kept; otherwise (or when it is refused) a new one is made.
	if [[ ! -s $TOKEN_FILE ]] || [[ -n $(find "$TOKEN_FILE" -mmin +$((TOKEN_LIFESPAN / 120))) ]]; then
		new_token
	fi
	wait_for "$DEADLINE" "slurmrestd (answers on :$(cat "$RUN/slurmrestd.port"))" rest_answers
	if ! rest_has_node; then
		new_token
		rest_has_node || die "GET /slurm/$REST_API/nodes does not list gpu-a17: $(rest_get nodes 2>&1 | head -c 500)"
	fi
	pid_of slurmrestd "$REST_PID" >/dev/null || die "slurmrestd exited (see $LOG/slurmrestd.log)"
	log "REST: /slurm/$REST_API/nodes lists gpu-a17"
}

cmd_start() {
	ensure_packages
	ensure_munge
	ensure_sysuser "$OPERATOR_USER"
	ensure_sysuser "$PLAIN_USER"
	ensure_jwt_key
	export SLURM_CONF=$CONF
	stop_if_no_accounting
	ensure_mariadb
	ensure_slurmdbd
	prepare_conf
	wait_for "$DEADLINE" "slurmdbd (sacctmgr show cluster)" dbd_up
	# Before slurmctld starts: it must find its cluster registered.
	ensure_associations
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
export SLURM_OPERATOR_USER=$OPERATOR_USER
export SLURM_ACCOUNTING=true
EOF
}

[[ $(id -u) -eq 0 ]] || die "run as root"
case ${1:-start} in
start) cmd_start ;;
stop) cmd_stop ;;
*) die "usage: $0 [start|stop]" ;;
esac
