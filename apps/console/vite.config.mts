import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const root = fileURLToPath(new URL('.', import.meta.url));

/**
 * The operator console. Served by the relay at /console/ (loopback only). Vite 8's oxc transform
 * handles TSX with the automatic runtime, so no React plugin is needed (no fast refresh in dev).
 * `npm run dev:console` proxies /console/api to a relay on RELAY_PORT (default 8767).
 */
export default defineConfig({
  root,
  base: '/console/',
  publicDir: 'public',
  // `@svc/events/<module>`: a pure module of libs/events, never its index (which holds the Node-side stores;
  // ESLint allows the console only the pure ones).
  resolve: { alias: { '@': `${root}src`, '@svc/events': `${root}../../libs/events/src` } },
  oxc: { jsx: { runtime: 'automatic' } },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    assetsDir: 'assets',
    sourcemap: false,
    target: 'es2022',
    modulePreload: { polyfill: false },
    chunkSizeWarningLimit: 600,
    rolldownOptions: {
      onwarn(warning, warn) {
        // "use client" in react-query: meaningless outside server components.
        if (warning.code === 'MODULE_LEVEL_DIRECTIVE') return;
        warn(warning);
      },
    },
  },
  server: {
    host: '127.0.0.1',
    proxy: { '/console/api': { target: `http://127.0.0.1:${process.env.RELAY_PORT ?? 8767}`, changeOrigin: true } },
  },
});
