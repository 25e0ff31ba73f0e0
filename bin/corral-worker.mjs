#!/usr/bin/env node
// Makes this machine a hand of a Corral session: runs the official SDK's self-hosted worker
// (`EnvironmentWorker`, unmodified) against Corral's work endpoints. It dials out only, so it
// works behind NAT, on a VPN, in CI or on a laptop that comes and goes.
//
//   CORRAL_ENVIRONMENT_KEY=corral-envkey-… npx corral-worker --url http://HOST:PORT --environment env_… [--workdir DIR]
//
// The key is read from the environment (or --key-file), never from the command line, where
// other users of the machine could read it in the process list.
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import Anthropic from '@anthropic-ai/sdk';

const usage = `usage: corral-worker --url URL --environment ENV_ID [--workdir DIR] [--worker-id ID] [--key-file FILE]
  The environment key comes from CORRAL_ENVIRONMENT_KEY (or ANTHROPIC_ENVIRONMENT_KEY, or --key-file).
  Make one with: curl -X POST -H "x-api-key: $CORRAL_API_KEY" URL/v1/environments/ENV_ID/keys`;

let values;
try {
  ({ values } = parseArgs({
    options: {
      url: { type: 'string' },
      environment: { type: 'string' },
      workdir: { type: 'string' },
      'worker-id': { type: 'string' },
      'key-file': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
    strict: true,
  }));
} catch (err) {
  console.error(`corral-worker: ${err.message}\n${usage}`);
  process.exit(2);
}
if (values.help) {
  console.log(usage);
  process.exit(0);
}
const url = values.url ?? process.env.CORRAL_URL;
const environmentId = values.environment ?? process.env.CORRAL_ENVIRONMENT_ID;
const key = values['key-file'] ? fs.readFileSync(values['key-file'], 'utf8').trim() : (process.env.CORRAL_ENVIRONMENT_KEY ?? process.env.ANTHROPIC_ENVIRONMENT_KEY);
delete process.env.CORRAL_ENVIRONMENT_KEY; // the tools' commands inherit this process's environment
delete process.env.ANTHROPIC_ENVIRONMENT_KEY;
for (const [name, v] of [['--url', url], ['--environment', environmentId], ['the environment key', key]]) {
  if (!v) {
    console.error(`corral-worker: ${name} is missing\n${usage}`);
    process.exit(2);
  }
}
const workdir = path.resolve(values.workdir ?? process.cwd());
fs.mkdirSync(workdir, { recursive: true });

const client = new Anthropic({ baseURL: url.replace(/\/+$/, '').replace(/\/v1$/, ''), apiKey: null, authToken: key });
const stop = new AbortController();
for (const sig of ['SIGINT', 'SIGTERM']) process.once(sig, () => stop.abort());
console.log(`corral-worker: polling ${url} for work of ${environmentId}; tools run in ${workdir}`);
try {
  await client.beta.environments.work.worker({ environmentId, environmentKey: key, workdir, ...(values['worker-id'] ? { workerId: values['worker-id'] } : {}) }).run(stop.signal);
} catch (err) {
  if (!stop.signal.aborted) {
    console.error(`corral-worker: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  }
}
