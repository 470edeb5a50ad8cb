/**
 * The Nest entry file (nest-cli.json `entryFile`): `node dist/apps/relay/src/main.js [flags]` is
 * `svc relay start [flags]`. The CLI (bin/svc) is the supported way in; this keeps `nest start` working.
 */
import { run } from './cli/main';

run(['relay', 'start', ...process.argv.slice(2)]);
