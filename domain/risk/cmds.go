package risk

import (
	"slices"
	"strconv"
	"strings"
	"sync"
)

// handlers classify one command each, by resolved name. They are filled in
// init because they refer back to runArgv (a wrapper classifies its inner
// command), which reads this map.
var handlers map[string]func(*call)

// safeNames are read-only commands (R15).
var safeNames = []string{
	"ls", "ll", "la", "dir", "vdir", "head", "tail", "wc", "grep", "egrep", "fgrep", "ag",
	"ack", "fd", "fdfind", "locate", "plocate", "mlocate", "tree", "stat", "file", "diff", "cmp", "comm", "md5sum",
	"sha1sum", "sha224sum", "sha256sum", "sha384sum", "sha512sum", "b2sum", "cksum", "sum", "shasum", "jq", "gojq",
	"cut", "nl", "fold", "fmt", "column", "paste", "join", "expand", "unexpand", "pr", "od", "hexdump", "hd", "strings",
	"test", "[", "[[", "ps", "pgrep", "pidof", "top",
	"htop", "btop", "uname", "uptime", "df", "du", "free", "lsblk", "lscpu", "lsusb", "lspci", "lsof", "ss", "netstat",
	"id", "whoami", "groups", "who", "w", "last", "lastlog", "whereis", "help", "info", "apropos",
	"whatis", "history", "tty", "seq", "yes", "expr", "bc", "dc", "factor", "numfmt", "getconf", "locale", "tput",
	"clear", "nproc", "arch", "lsmod", "vmstat", "iostat", "mpstat", "sar", "pstree", "tac", "shuf",
	"zcat", "zless", "zgrep", "bzcat", "xzcat", "zstdcat", "lz4cat", "jobs", "getopts", "umask", "ulimit", "shopt", "unset", "local",
	"dirs", "times", "caller", "disown",
	"suspend", "logout", "let", "cal", "ncal", "getent", "lsattr", "getcap", "blkid", "findmnt", "dmidecode", "lshw",
	"hwinfo", "inxi", "neofetch", "fastfetch", "sensors", "nvidia-smi", "cloc", "tokei", "scc", "bat", "batcat", "exa",
	"eza", "lsd", "glow", "yq", "xq", "tldr", "difft", "delta", "colordiff", "wdiff", "sdiff", "diff3", "look", "iconv",
	"envsubst", "gettext", "ngettext", "tsort", "ptx", "csvlook", "csvcut", "mlr", "xmllint", "uuidgen", "sha1",
	"md5", "ldd", "nm", "objdump", "readelf", "size", "namei", "pwdx", "coredumpctl", "resolvectl", "networkctl", "lslocks", "lsipc", "lsns", "lsinitramfs",
	"dpkg-query", "apt-cache", "rpmquery", "git-lfs", "dircolors", "shellcheck", "hadolint", "iw",
	"ethtool",
}

// moderateNames change the workspace or run project code (R14).
var moderateNames = []string{
	"mktemp", "pandoc", "dos2unix", "unix2dos", "rustc", "patch", "7z", "7za", "rar", "unrar", "compress", "uncompress", "cpio",
	"gedit", "kate", "jed",
	"pytest", "tox", "nox", "mypy", "isort", "flake8", "pylint", "eslint", "tsc", "jest",
	"vitest", "mocha", "cmake", "meson", "gradle", "gradlew", "mvn", "ant", "sbt", "bazel", "bazelisk", "buck",
	"gcc", "g++", "cc", "c++", "clang", "clang++", "ld", "as", "javac", "java", "kotlinc", "scalac", "dotnet", "swift",
	"swiftc", "zig", "nim", "ghc", "cabal", "stack", "dune", "opam", "mix", "elixir", "erl", "rebar3", "R",
	"golangci-lint", "staticcheck", "terraform-docs", "tflint",
	"clippy-driver", "bundle", "rake", "rspec", "composer", "phpunit", "poetry", "pipenv", "hatch", "pdm",
	"virtualenv", "conda", "mamba", "pre-commit", "direnv", "asdf", "mise", "nvm", "pyenv", "rbenv", "rustup", "sdk",
	"gpg", "gpg2", "ssh-keygen", "ssh-add", "ssh-agent", "age", "jupyter", "ipython",
	"bash-completion", "just", "task",
}

// highNames are elevated operations with no finer rule (R13).
var highNames = []string{
	"groupadd", "groupmod", "groupdel", "gpasswd", "chpasswd", "chage", "chsh",
	"chfn", "newusers", "vipw", "vigr", "sudoedit", "umount", "swapon", "swapoff", "modprobe", "insmod",
	"rmmod", "depmod", "losetup", "cryptsetup", "chattr", "setcap", "setfacl", "chcon", "restorecon", "semanage",
	"setsebool", "update-alternatives", "update-grub", "grub-install", "grub-mkconfig", "update-initramfs", "dracut",
	"mkinitcpio", "ldconfig", "hwclock", "ntpdate", "chronyc", "nmcli", "netplan", "ifup", "ifdown", "brctl", "tc", "wg", "wg-quick", "openvpn", "tailscale", "zerotier-cli",
	"nmap", "masscan", "zmap", "nikto", "hping3", "sqlmap", "gobuster", "ffuf", "hydra", "john", "hashcat", "aircrack-ng",
	"tshark", "wireshark", "ettercap", "arpspoof", "mitmproxy", "responder", "ssh-copy-id", "sshpass",
	"ftp", "lftp", "tftp", "smbclient", "rpcclient", "mount.cifs", "showmount", "exportfs", "quotacheck",
	"renice", "cpupower", "tuned-adm", "pm2", "supervisorctl", "launchctl", "logrotate",
	"aa-enforce", "apparmor_parser", "nix", "eopkg", "pkg_add", "opkg", "ipkg",
	"vagrant", "packer", "ansible", "ansible-playbook", "salt", "puppet", "chef-client", "virsh", "qemu-system-x86_64",
	"lxc", "lxd", "incus", "multipass", "minikube", "kind", "k3s", "microk8s", "eksctl", "ecs-cli", "linode-cli",
	"heroku", "vercel", "netlify", "fly", "flyctl", "firebase", "wrangler", "serverless", "sam", "cdk", "pulumi",
	"skaffold", "tilt", "argocd", "flux", "istioctl", "velero", "consul", "nomad", "vault", "etcdctl", "crictl", "ctr",
	"buildah", "skopeo", "xdotool", "xinput", "setxkbmap", "expect", "nsupdate", "iodine", "dnscat", "tor", "caddy", "nginx", "apache2", "httpd", "apachectl", "lighttpd", "gunicorn", "uvicorn", "flask",
	"pivot_root", "switch_root", "efibootmgr", "mokutil", "fwupdmgr", "tpm2", "ipmitool", "dmsetup", "lvcreate", "lvextend", "lvresize", "pvresize",
	"vgextend", "resize2fs", "xfs_growfs", "tune2fs", "e2fsck", "fsck", "xfs_repair", "zfs", "btrfs",
	"sg", "newgrp", "runcon", "capsh", "setpriv", "quota", "edquota", "setquota",
}

var handlerNameList []string
var handlerNamesOnce sync.Once

// handlerNames lists every command name the classifier knows, sorted.
func handlerNames() []string {
	handlerNamesOnce.Do(func() {
		for n := range handlers {
			handlerNameList = append(handlerNameList, n)
		}
		slices.Sort(handlerNameList)
	})
	return handlerNameList
}

func levelHandler(l Level, rule string) func(*call) {
	return func(c *call) { c.add(l, rule, c.name) }
}

// registry maps each command name to its handler. A name is registered
// once: a second registration panics, so two families cannot both claim a
// command and have the later one win silently.
type registry map[string]func(*call)

func (r registry) add(fn func(*call), names ...string) {
	for _, n := range names {
		if _, dup := r[n]; dup {
			panic("risk: command " + strconv.Quote(n) + " is registered twice")
		}
		r[n] = fn
	}
}

func init() { handlers = buildRegistry() }

// buildRegistry registers every command the classifier knows: the plain
// lists above, then one register function per family (files, wrappers,
// shells, system, network, developer tools, hidden execution, cloud, git,
// containers, packages).
func buildRegistry() registry {
	r := registry{}
	r.add(levelHandler(High, "R13 elevated operation"), highNames...)
	r.add(levelHandler(Moderate, "R14 workspace change"), moderateNames...)
	r.add(func(c *call) { passThrough(c, Safe, "R15 read-only") }, safeNames...)
	reg := r.add
	// Text commands whose output is computed (R4 payload recovery).
	reg(hEcho, "echo")
	reg(hPrintf, "printf")
	reg(hCat, "cat")
	reg(hBase64, "base64", "base32")
	reg(hXxd, "xxd")
	reg(hRev, "rev")
	reg(hTr, "tr")
	reg(hTee, "tee")
	reg(hWhich, "which", "whence")
	reg(hType, "type")
	reg(hBasename, "basename", "dirname")
	reg(hPwd, "pwd")
	reg(hRealpath, "realpath", "readlink")

	registerFileHandlers(reg)
	registerWrapperHandlers(reg)
	registerShellHandlers(reg)
	registerSystemHandlers(reg)
	registerNetHandlers(reg)
	registerDevHandlers(reg)
	registerHiddenExecHandlers(reg)
	registerCloudHandlers(reg)
	registerGitHandlers(reg)
	registerContainerHandlers(reg)
	registerPackageHandlers(reg)
	return r
}

// firstSub returns the first argument that is not an option, and its index.
func firstSub(args []field) (string, int) {
	for i, a := range args {
		if !strings.HasPrefix(a.s, "-") {
			return a.s, i
		}
	}
	return "", -1
}
