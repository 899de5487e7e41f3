/**
 * Imported first by every command that may create an AWS SDK client (`npm start`, `send`, `outage-drill`) and
 * by vitest.config.ts: turns off the AWS SDK's NodeVersionSupportWarning, and nothing else.
 *
 * On Node 20 the SDK prints, once per process, a 9-line warning that SDK versions published after January 2027
 * will need Node 22. The CLI needs Node 22.13+, but this repository's test suite also runs on Node 20
 * (docs/decisions.md, "The README names Node 24 and 22.13+; the construct also installs on 20.19+"), with SDK
 * versions pinned below that floor: there the warning repeats in every test process and says nothing the pins
 * do not.
 * The SDK's own switch silences exactly that warning; `--no-warnings` or a process 'warning' listener would
 * hide or reshape every other warning too. A value the user set (e.g. `false`, to see it) is kept; an empty one counts as unset.
 */
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ||= 'true';
