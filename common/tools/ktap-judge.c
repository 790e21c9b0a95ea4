// SPDX-License-Identifier: GPL-2.0
/*
 * ktap-judge [--quiet] [--exit STATUS] [--ktap] LOG
 *
 * The one reader of test results on the host. LOG ("-": standard input) is
 * the serial log of a QEMU test run, or with --ktap a KTAP document alone
 * (common/run-tap.sh). The guest runner (kernel/scripts/guest-lib.sh) prints
 * one KTAP version 1 document: a header at the start of a line, a plan, one
 * top-level result a list entry, the entry's own output nested below it
 * (four blanks). Counts are per subtest: each nested `ok` is a pass (a
 * skip with `# SKIP`), each nested `not ok` a failure; a top-level result
 * with no nested results counts itself (a plain entry, the kmemleak scan),
 * and a top-level `not ok` whose subtests did not fail (a crash, a
 * timeout, no output) counts as one failure.
 *
 * A serial log passes only if
 *  - QEMU exited with status 1 (isa-debug-exit byte 0), from --exit or from
 *    the host trailer `MSHARE-HOST: qemu-exit=N` that run-qemu.sh appends;
 *    a timeout (124/137) is never a pass,
 *  - the log holds exactly one runner document, complete (as many top-level
 *    results as its plan says, numbered 1, 2, ... in order; results after
 *    the plan count too, so more than planned fails as well), in which
 *    nothing failed and something passed,
 *  - and no kernel report (BUG, WARNING, KASAN, lockdep, Oops, panic, RCU
 *    stall, soft lockup, hung task, kmemleak, UBSAN, ...) appears anywhere,
 *    matched anywhere on a line: printk output may land in the middle of a
 *    test's line on the shared console. Each is shown with its context.
 * A failure the guest's counts do not show (a report, a timeout, a crash,
 * a missing or cut short document, an odd exit status) adds one failure.
 * Nested results of an entry the run never finished (the guest died in
 * it) are counted all the same.
 * With --ktap the document is judged alone, by the same rules: one header,
 * a plan met, numbering in order, nothing failed, something passed.
 * A NUL byte in the log (a garbled console) is read as `@`, so that what
 * follows it on the line is still read.
 *
 * The output ends on
 *   ktap-judge: verdict=PASS|FAIL passed=N failed=M skipped=K splats=S qemu-exit=E
 *   N passed, M failed
 * Exit status: 0 PASS, 1 FAIL, 2 usage or read error.
 */
#include <ctype.h>
#include <errno.h>
#include <regex.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What the kernel prints when something went wrong: any of it fails a run. */
static const char splat_re[] =
	"BUG:|WARNING:|KASAN|UBSAN|kernel BUG at|Oops|general protection fault"
	"|Kernel panic|possible circular locking|possible recursive locking"
	"|inconsistent lock state|lock held when returning|bad unlock balance"
	"|suspicious RCU usage|detected stalls? on CPU|rcu_(sched|preempt|bh) detected stall"
	"|rcu: INFO:|soft lockup|hard LOCKUP|hung_task|blocked for more than"
	"|unreferenced object 0x|suspected memory leak|list_(add|del) corruption"
	"|ODEBUG:|Bad page (state|map)|page_table_check|Unable to handle kernel"
	"|Call Trace:";

#define HOST_TRAILER "MSHARE-HOST: qemu-exit="
#define MAX_SHOWN 8	/* reports shown with context */
#define CONTEXT_BEFORE 3
#define CONTEXT_AFTER 25
#define MAX_LISTED 40	/* offending lines listed */
#define MAX_WHY 12	/* lines shown before a failed result */

/* The log as read, and how to report on it. */
struct judge {
	char **lines;
	size_t nlines;
	bool quiet;
	bool failed_heading;	/* "---- failed tests ----" printed */
};

__attribute__((format(printf, 2, 3))) static void say(const struct judge *j, const char *fmt, ...)
{
	va_list ap;

	if (j->quiet)
		return;
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
}

/*
 * Read LOG into j->lines, without the serial console's carriage returns. A
 * NUL becomes '@': the lines are C strings, and a NUL would hide the rest
 * of its line (a report after it) from every match.
 */
static int read_log(struct judge *j, const char *path)
{
	FILE *f = strcmp(path, "-") ? fopen(path, "r") : stdin;
	size_t cap = 0, len = 0;
	char *line = NULL;
	ssize_t n;
	int err = 0;

	if (!f) {
		err = -errno;
		fprintf(stderr, "ktap-judge: %s: %s\n", path, strerror(-err));
		return err;
	}
	while ((n = getline(&line, &len, f)) >= 0) {
		char *w = line, *copy;

		for (char *r = line; r < line + n; r++) {
			if (*r == '\0')
				*w++ = '@';
			else if (*r != '\r' && *r != '\n')
				*w++ = *r;
		}
		*w = '\0';
		if (j->nlines == cap) {
			cap = cap ? cap * 2 : 1024;
			j->lines = realloc(j->lines, cap * sizeof(*j->lines));
			if (!j->lines)
				abort();
		}
		copy = malloc(w - line + 1);
		if (!copy)
			abort();
		memcpy(copy, line, w - line + 1);
		j->lines[j->nlines++] = copy;
	}
	if (ferror(f)) {
		err = errno ? -errno : -EIO;
		fprintf(stderr, "ktap-judge: reading %s: %s\n", path, strerror(-err));
	}
	free(line);
	if (f != stdin)
		fclose(f);
	return err;
}

/* The kernel reports, with context; returns how many lines matched. */
static unsigned scan_splats(const struct judge *j)
{
	regex_t re;
	unsigned hits = 0, shown = 0, listed = 0;
	size_t last_end = 0;
	bool *hit = calloc(j->nlines + 1, sizeof(*hit));

	if (!hit || regcomp(&re, splat_re, REG_EXTENDED | REG_NOSUB))
		abort();
	for (size_t i = 0; i < j->nlines; i++) {
		if (strncmp(j->lines[i], "MSHARE-HOST:", 12) &&
		    !regexec(&re, j->lines[i], 0, NULL, 0)) {
			hit[i] = true;
			hits++;
		}
	}
	regfree(&re);
	if (hits)
		say(j, "---- kernel reports in the log ----\n");
	for (size_t i = 0; i < j->nlines && hits; i++) {
		size_t n = i + 1, from, to; /* line numbers count from 1 */

		if (!hit[i] || n <= last_end)
			continue;
		if (shown == MAX_SHOWN) {
			say(j, "... (more reports omitted; see the log)\n");
			break;
		}
		from = n > CONTEXT_BEFORE ? n - CONTEXT_BEFORE : 1;
		if (from <= last_end)
			from = last_end + 1;
		to = n + CONTEXT_AFTER;
		last_end = to;
		say(j, "-- line %zu:\n", n);
		for (size_t k = from; k <= to && k <= j->nlines; k++)
			say(j, "   | %s\n", j->lines[k - 1]);
		shown++;
	}
	if (hits)
		say(j, "---- offending lines ----\n");
	for (size_t i = 0; i < j->nlines && listed < MAX_LISTED; i++) {
		if (hit[i]) {
			say(j, "   %zu:%s\n", i + 1, j->lines[i]);
			listed++;
		}
	}
	free(hit);
	return hits;
}

/*
 * "ok N ..." or "not ok N ...": 1 for ok, 0 for not ok, -1 for neither;
 * *num = N if num is not NULL.
 */
static int result(const char *s, unsigned long *num)
{
	const char *p;

	if (!strncmp(s, "ok ", 3))
		p = s + 3;
	else if (!strncmp(s, "not ok ", 7))
		p = s + 7;
	else
		return -1;
	if (!isdigit((unsigned char)*p))
		return -1;
	if (num)
		*num = strtoul(p, NULL, 10);
	return s[0] == 'o';
}

/* A `# SKIP` directive (any case, blanks after the `#` allowed). */
static bool is_skip(const char *s)
{
	for (const char *h = strchr(s, '#'); h; h = strchr(h + 1, '#')) {
		const char *p = h + 1;

		while (*p == ' ' || *p == '\t')
			p++;
		if (!strncasecmp(p, "skip", 4))
			return true;
	}
	return false;
}

/*
 * A failed result, under a heading the first time, after the lines that
 * tell why: a nested result's diagnostics (its entry's `    # ` lines since
 * the previous nested result), or for a top-level result the tail of its
 * entry's output unless a nested failure told it already. A CI summary
 * then names the failed check, not only the test.
 */
static void show_failed(struct judge *j, size_t at, bool nested, bool why)
{
	size_t from = at, shown = 0;

	if (!j->failed_heading)
		say(j, "---- failed tests ----\n");
	j->failed_heading = true;
	while (why && from > 0 && shown < MAX_WHY) {
		const char *l = j->lines[from - 1];

		if (!strcmp(l, "KTAP version 1") || result(l, NULL) >= 0 ||
		    (nested && !strncmp(l, "    ", 4) && result(l + 4, NULL) >= 0))
			break;
		if (!strncmp(l, nested ? "    # " : "    ", nested ? 6 : 4))
			shown++;
		from--;
	}
	for (size_t k = from; k < at; k++) {
		const char *l = j->lines[k];

		if (!strncmp(l, nested ? "    # " : "    ", nested ? 6 : 4))
			say(j, "      %s\n", l + 4);
	}
	say(j, "   %s\n", j->lines[at] + (nested ? 4 : 0));
}

struct counts {
	unsigned long passed, failed, skipped;
};

struct document {
	size_t header;		/* line index of the header */
	unsigned headers;	/* runner documents in the log */
	long plan;		/* -1: none */
	unsigned long results;	/* top-level results */
	unsigned long misnumbered; /* the first result out of order (its index, from 1), or 0 */
	unsigned long number;	/* and the number it had */
	unsigned long pending;	/* nested results after the last top-level one */
};

/*
 * Count the document that starts at the first top-level header, to the end
 * of the log: a result after the plan is one too many, not noise. Nested
 * results are those indented by exactly four blanks; deeper ones belong to
 * an entry's own nesting, which the entry's result sums up already.
 */
static void count(struct judge *j, struct document *doc, struct counts *c)
{
	struct counts sub = { 0, 0, 0 };
	unsigned long num;
	size_t i;

	doc->headers = 0;
	doc->plan = -1;
	doc->results = 0;
	doc->misnumbered = 0;
	doc->pending = 0;
	for (i = 0; i < j->nlines; i++) {
		if (!strcmp(j->lines[i], "KTAP version 1") && !doc->headers++)
			doc->header = i;
	}
	if (!doc->headers)
		return;
	for (i = doc->header + 1; i < j->nlines; i++) {
		const char *l = j->lines[i];
		int r;

		if (doc->plan < 0 && !strncmp(l, "1..", 3) && isdigit((unsigned char)l[3])) {
			doc->plan = strtol(l + 3, NULL, 10);
			continue;
		}
		if (!strncmp(l, "    ", 4) && l[4] != ' ' && (r = result(l + 4, NULL)) >= 0) {
			if (!r)
				sub.failed++;
			else if (is_skip(l + 4))
				sub.skipped++;
			else
				sub.passed++;
			if (!r)
				show_failed(j, i, true, true);
			continue;
		}
		r = result(l, &num);
		if (r < 0)
			continue;
		doc->results++;
		if (num != doc->results && !doc->misnumbered) {
			doc->misnumbered = doc->results;
			doc->number = num;
		}
		c->passed += sub.passed;
		c->skipped += sub.skipped;
		c->failed += sub.failed;
		if (!r) {
			if (!sub.failed)
				c->failed++;
			show_failed(j, i, false, !sub.failed);
		} else if (!sub.passed && !sub.skipped && !sub.failed) {
			if (is_skip(l))
				c->skipped++;
			else
				c->passed++;
		}
		sub = (struct counts){ 0, 0, 0 };
	}
	/* The guest died inside an entry: what the entry reported still counts. */
	doc->pending = sub.passed + sub.skipped + sub.failed;
	c->passed += sub.passed;
	c->skipped += sub.skipped;
	c->failed += sub.failed;
}

static void usage(void)
{
	fprintf(stderr, "usage: ktap-judge [--quiet] [--exit STATUS] [--ktap] LOG\n");
	exit(2);
}

int main(int argc, char **argv)
{
	const char *status = NULL, *reasons[16];
	unsigned nreasons = 0, splats = 0;
	bool ktap_only = false, extra = false;
	struct judge j = { NULL, 0, false, false };
	struct counts c = { 0, 0, 0 };
	struct document doc = { 0, 0, -1, 0, 0, 0, 0 };
	static char why[5][160];
	unsigned long failed;
	int i;

	for (i = 1; i < argc - 1; i++) {
		if (!strcmp(argv[i], "--quiet"))
			j.quiet = true;
		else if (!strcmp(argv[i], "--ktap"))
			ktap_only = true;
		else if (!strcmp(argv[i], "--exit") && i + 2 < argc)
			status = argv[++i];
		else
			usage();
	}
	if (i != argc - 1)
		usage();
	if (read_log(&j, argv[i]) < 0)
		return 2;

#define REASON(x, is_extra) do { reasons[nreasons++] = (x); extra |= (is_extra); } while (0)
	if (!ktap_only) {
		splats = scan_splats(&j);
		if (splats) {
			snprintf(why[0], sizeof(why[0]), "%u kernel report line(s) in the log", splats);
			REASON(why[0], true);
		}
		if (!status) {
			for (size_t k = j.nlines; k-- > 0;) {
				if (!strncmp(j.lines[k], HOST_TRAILER, strlen(HOST_TRAILER))) {
					static char s[16];

					snprintf(s, sizeof(s), "%.*s",
						 (int)strspn(j.lines[k] + strlen(HOST_TRAILER), "0123456789"),
						 j.lines[k] + strlen(HOST_TRAILER));
					status = s;
					break;
				}
			}
		}
		if (!status || !*status)
			status = "unknown";
	}

	count(&j, &doc, &c);
	if (!doc.headers) {
		REASON(ktap_only ? "no KTAP document" :
		       "no KTAP document from the guest runner (guest crashed, panicked or hung before the tests)",
		       true);
	} else {
		if (doc.headers > 1) {
			snprintf(why[1], sizeof(why[1]), ktap_only ? "%u KTAP documents" :
				 "%u KTAP documents from the guest runner (guest rebooted?)", doc.headers);
			REASON(why[1], true);
		}
		if (doc.plan < 0) {
			REASON("no plan after the KTAP header", true);
		} else if (doc.results < (unsigned long)doc.plan) {
			snprintf(why[2], sizeof(why[2]),
				 "%lu of %ld top-level results (a crash, a panic or a hang cut the run short)%s",
				 doc.results, doc.plan,
				 doc.pending ? "; the last entry's nested results are counted" : "");
			REASON(why[2], true);
		} else if (doc.results > (unsigned long)doc.plan) {
			snprintf(why[2], sizeof(why[2]), "%lu top-level results, %ld planned", doc.results,
				 doc.plan);
			REASON(why[2], true);
		}
		if (doc.misnumbered) {
			snprintf(why[3], sizeof(why[3]), "top-level result %lu is numbered %lu", doc.misnumbered,
				 doc.number);
			REASON(why[3], true);
		}
	}
	if (c.failed)
		REASON("tests failed", false);
	if (!c.passed && !c.failed)
		REASON("no test passed", true);
	if (!ktap_only) {
		if (!strcmp(status, "1"))
			;
		else if (!strcmp(status, "3")) {
			if (!c.failed)
				REASON("QEMU exit status 3 (guest reported failure)", true);
		} else if (!strcmp(status, "124") || !strcmp(status, "137"))
			REASON("timeout: QEMU killed", true);
		else if (!strcmp(status, "0"))
			REASON("QEMU exit status 0: the guest powered off or panicked instead of reporting", true);
		else
			REASON("QEMU exit status not 1", true);
	}

	say(&j, "results: passed=%lu failed=%lu skipped=%lu\n", c.passed, c.failed, c.skipped);
	for (unsigned k = 0; k < nreasons; k++)
		say(&j, "FAIL: %s\n", reasons[k]);
	printf("ktap-judge: verdict=%s passed=%lu failed=%lu skipped=%lu", nreasons ? "FAIL" : "PASS",
	       c.passed, c.failed, c.skipped);
	if (!ktap_only)
		printf(" splats=%u qemu-exit=%s", splats, status);
	printf("\n");
	failed = c.failed + extra;
	if (nreasons && !failed)
		failed = 1;
	printf("%lu passed, %lu failed\n", c.passed, failed);
	return nreasons ? 1 : 0;
}
