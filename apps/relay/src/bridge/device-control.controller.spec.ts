import { RequestMethod } from '@nestjs/common';
import { METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants';
import { DEVICE_CONTROL_ROUTES, ROUTE_ALIASES } from '@svc/domain';
import { DEVICE_CONTROL_INPUT, DeviceControlController, deviceControlEndpoints } from './device-control.controller';

describe('Device Control controller: one source of routes', () => {
  it('serves exactly the domain table and its aliases, each with its methods', () => {
    const proto = DeviceControlController.prototype as unknown as Record<string, unknown>;
    const served = Object.getOwnPropertyNames(proto)
      .filter((n) => n !== 'constructor' && n !== 'go')
      .map((n) => {
        const handler = proto[n] as object;
        const method = Reflect.getMetadata(METHOD_METADATA, handler) === RequestMethod.GET ? 'GET' : 'POST';
        return `${method} ${String(Reflect.getMetadata(PATH_METADATA, handler))}`;
      })
      .sort();
    const expected = [
      ...DEVICE_CONTROL_ROUTES.flatMap((r) => r.methods.map((m) => `${m} ${r.path}`)),
      ...Object.entries(ROUTE_ALIASES).flatMap(([alias, target]) =>
        DEVICE_CONTROL_ROUTES.find((r) => r.path === target)!.methods.map((m) => `${m} ${alias}`),
      ),
    ].sort();
    expect(served).toEqual(expected);
    // Spec 4.9: 34 paths with /apps (33 without); /return_to_svc is this relay's name for /return_to_hermes.
    expect(new Set(deviceControlEndpoints().map((e) => e.path)).size).toBe(35);
  });

  it('names inputs only for routes the table has, and every POST that carries data has a body DTO', () => {
    const endpoints = new Set(DEVICE_CONTROL_ROUTES.flatMap((r) => r.methods.map((m) => `${m} ${r.path}`)));
    for (const key of Object.keys(DEVICE_CONTROL_INPUT)) expect(endpoints.has(key) ? key : `unknown: ${key}`).toBe(key);
    const selectorsOnly = [...endpoints].filter((k) => k.startsWith('POST ') && !DEVICE_CONTROL_INPUT[k]?.body);
    expect(selectorsOnly.sort()).toEqual(['POST /return_to_svc', 'POST /setup']);
  });
});
