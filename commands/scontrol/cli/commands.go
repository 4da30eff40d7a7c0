package cli

import "strings"

// hasPrefixFold is xstrncasecmp(s, word, n) == 0: the first n bytes of s
// and word are equal ignoring ASCII case, where a string shorter than n
// must end at the same place as the other.
func hasPrefixFold(s, word string, n int) bool {
	for i := 0; i < n; i++ {
		var a, b byte
		if i < len(s) {
			a = lower(s[i])
		}
		if i < len(word) {
			b = lower(word[i])
		}
		if a != b {
			return false
		}
		if a == 0 {
			return true
		}
	}
	return true
}

func lower(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// matches reports whether tag selects keyword when at least minLen
// characters must match (scontrol's xstrncasecmp(tag, kw, MAX(len, min))).
func matches(tag, keyword string, minLen int) bool {
	return hasPrefixFold(tag, keyword, max(len(tag), minLen))
}

// keyword is one top-level scontrol command. Keywords are tried in
// scontrol's order, which decides what an abbreviation means.
type keyword struct {
	names []string
	min   int // characters that must match; exact means a fixed count
	fixed bool
	run   func(s *state, args []string)
}

func (k keyword) match(tag string) bool {
	for _, n := range k.names {
		if k.fixed {
			if hasPrefixFold(tag, n, k.min) {
				return true
			}
		} else if matches(tag, n, k.min) {
			return true
		}
	}
	return false
}

// keywords lists every command of scontrol 22.05 in its dispatch order.
// Commands that need a controller are not implemented yet.
var keywords []keyword

func init() {
	kw := func(min int, run func(*state, []string), names ...string) keyword {
		return keyword{names: names, min: min, run: run}
	}
	fixed := func(min int, run func(*state, []string), names ...string) keyword {
		return keyword{names: names, min: min, fixed: true, run: run}
	}
	todo := notImplemented
	keywords = []keyword{
		kw(5, todo, "abort"),
		kw(2, func(s *state, _ []string) { s.allFlag = true }, "all"),
		kw(3, cmdCancelReboot, "cancel_reboot"),
		kw(2, todo, "completing"),
		kw(2, func(s *state, a []string) {
			if len(a) >= 2 {
				s.clusterUnsupported(a[1])
				panic(exitError{1})
			}
		}, "cluster"),
		kw(2, cmdCreate, "create"),
		kw(1, cmdDetails, "details"),
		kw(2, cmdErrnumstr, "errnumstr", "errnostr"),
		kw(2, cmdExit, "exit"),
		kw(7, todo, "gethost"),
		kw(15, todo, "hash_file"),
		kw(9, todo, "hash"),
		kw(2, cmdHelp, "help"),
		kw(2, func(s *state, _ []string) { s.allFlag, s.detailFlag = false, false }, "hide"),
		kw(1, cmdOneliner, "oneliner"),
		kw(3, todo, "pidinfo"),
		kw(3, cmdPing, "ping"),
		fixed(2, cmdQuiet, "\\q"),
		kw(4, cmdQuiet, "quiet"),
		kw(4, cmdExit, "quit"),
		kw(3, cmdReboot, "reboot_nodes"),
		kw(3, cmdReconfigure, "reconfigure"),
		kw(3, cmdRequeue, "requeue"),
		fixed(11, cmdRequeueHold, "requeuehold"),
		fixed(4, cmdHold, "hold"),
		fixed(5, cmdHold, "holdu"),
		fixed(5, cmdHold, "uhold"),
		kw(3, cmdHold, "release"),
		kw(2, cmdSuspend, "suspend"),
		kw(3, cmdSuspend, "resume"),
		kw(3, cmdTop, "top"),
		kw(3, todo, "token"),
		kw(2, cmdWaitJob, "wait_job"),
		kw(9, cmdSetDebugFlags, "setdebugflags"),
		kw(3, cmdFSDampening, "fsdampeningfactor", "fairsharedampeningfactor"),
		kw(2, cmdSetDebug, "setdebug"),
		kw(3, cmdSchedLogLevel, "schedloglevel"),
		kw(3, cmdShow, "show"),
		kw(5, cmdWrite, "write"),
		kw(8, cmdTakeover, "takeover"),
		kw(8, cmdShutdown, "shutdown"),
		kw(1, cmdUpdate, "update"),
		kw(1, cmdDelete, "delete"),
		kw(4, cmdVerbose, "verbose"),
		kw(4, cmdVersion, "version"),
		kw(1, todo, "listpids"),
		kw(6, todo, "getent"),
		kw(1, cmdNotify, "notify"),
		kw(3, todo, "callerid"),
	}
}

// processCommand runs one command line (already split into words).
func (s *state) processCommand(args []string) {
	if len(args) < 1 {
		s.exitCode = 1
		if s.quietFlag == -1 {
			s.eprintf("no input")
		}
		return
	}
	tag := args[0]
	for _, k := range keywords {
		if k.match(tag) {
			k.run(s, args)
			return
		}
	}
	s.exitCode = 1
	s.eprintf("invalid keyword: %s\n", tag)
}

func notImplemented(s *state, args []string) {
	s.exitCode = 1
	s.errorf("%s: not implemented yet by this scontrol", strings.ToLower(args[0]))
}

func (s *state) tooMany(tag string) {
	s.exitCode = 1
	s.eprintf("too many arguments for keyword:%s\n", tag)
}

func cmdDetails(s *state, a []string) {
	if len(a) > 1 {
		s.tooMany(a[0])
		return
	}
	s.detailFlag = true
}

func cmdExit(s *state, a []string) {
	if len(a) > 1 {
		s.tooMany(a[0])
	}
	s.exitFlag = true
}

func cmdHelp(s *state, a []string) {
	if len(a) > 1 {
		s.tooMany(a[0])
	}
	s.usage()
}

func cmdOneliner(s *state, a []string) {
	if len(a) > 1 {
		s.tooMany(a[0])
	}
	s.oneLiner = true
}

func cmdQuiet(s *state, a []string) {
	if len(a) > 1 {
		s.tooMany(a[0])
	}
	s.quietFlag = 1
}

func cmdVerbose(s *state, a []string) {
	if len(a) > 1 {
		s.exitCode = 1
		s.eprintf("too many arguments for %s keyword\n", a[0])
	}
	s.quietFlag = -1
}

func cmdVersion(s *state, a []string) {
	if len(a) > 1 {
		s.exitCode = 1
		s.eprintf("too many arguments for %s keyword\n", a[0])
	}
	s.printVersion()
}
