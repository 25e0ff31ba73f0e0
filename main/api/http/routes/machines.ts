import { Hono } from 'hono';
import type { Host } from '../../../host';
import { machineCalls } from '../../ui/calls/machines';
import { machineSchemas } from '../../ui/machines-contract';
import { UiServiceError } from '../../ui/service';
import { ApiError } from '../errors';
import { jsonBody } from '../request';

/**
 * The hands panel's host side for scripts (`/v1/hands/…`): the same calls as the window's, with
 * the same checks. A dropped file's contents are posted as JSON text; a key goes to the vault and
 * never comes back. Giving and handing over hands are `/v1/sessions/{id}/hands` (routes/hands.ts).
 */
export function machineRoutes(host: Host): Hono {
  const app = new Hono();
  const calls = machineCalls(host);
  const http = async <T>(fn: () => T | Promise<T>): Promise<T> => {
    try {
      return await fn();
    } catch (err) {
      if (err instanceof UiServiceError && err.ui.kind !== 'internal') throw new ApiError(err.ui.kind === 'not_found' ? 'not_found_error' : 'invalid_request_error', err.ui.message);
      throw err;
    }
  };
  app.get('/discover', async (c) => c.json(await http(() => calls.discoverMachines({}))));
  app.post('/dropped_files', async (c) => c.json(await http(async () => calls.readDroppedFile(await jsonBody(c, machineSchemas.readDroppedFile)))));
  app.post('/ssh_test', async (c) => c.json(await http(async () => calls.testSshHost(await jsonBody(c, machineSchemas.testSshHost)))));
  app.post('/ssh_trust', async (c) => c.json(await http(async () => calls.trustHostKey(await jsonBody(c, machineSchemas.trustHostKey)))));
  app.post('/machines', async (c) => c.json(await http(async () => calls.attachMachine(await jsonBody(c, machineSchemas.attachMachine)))));
  return app;
}
