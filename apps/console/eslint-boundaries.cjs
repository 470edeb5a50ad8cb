// The console's import boundaries, bulletproof-react's: src/app -> src/features/<f> -> shared src/components
// and src/lib. A feature never imports another (what two features share moves to components/ or lib/), and
// shared code imports no feature and not the app. Imports are read as written: `@/...` or a relative path.
const path = require('node:path');

const SRC = path.join(__dirname, 'src');

/** `features/bridge/api/get-bridge` -> ['features', 'bridge']; outside src -> null. */
function place(fromSrc) {
  if (fromSrc.startsWith('..') || path.isAbsolute(fromSrc)) return null;
  const [area, feature] = fromSrc.split(/[\\/]/);
  return { area, feature };
}

const rule = {
  meta: {
    type: 'problem',
    docs: { description: 'Console features never import each other; shared code imports neither features nor the app.' },
    schema: [],
    messages: {
      crossFeature: 'features/{{from}} may not import features/{{to}}: move what both need to src/components or src/lib.',
      upward: 'src/{{from}} may not import src/{{to}} (app -> features -> components, lib).',
    },
  },
  create(context) {
    const file = context.filename;
    const here = place(path.relative(SRC, file));
    if (!here) return {};
    const check = (source) => {
      if (!source || typeof source.value !== 'string') return;
      const spec = source.value;
      let target;
      if (spec.startsWith('@/')) target = place(spec.slice(2));
      else if (spec.startsWith('.')) target = place(path.relative(SRC, path.resolve(path.dirname(file), spec)));
      if (!target) return;
      if (here.area === 'features' && target.area === 'features' && target.feature !== here.feature)
        context.report({ node: source, messageId: 'crossFeature', data: { from: here.feature, to: target.feature ?? '' } });
      else if (here.area === 'features' && target.area === 'app')
        context.report({ node: source, messageId: 'upward', data: { from: 'features', to: 'app' } });
      else if ((here.area === 'components' || here.area === 'lib') && (target.area === 'features' || target.area === 'app'))
        context.report({ node: source, messageId: 'upward', data: { from: here.area, to: target.area } });
    };
    return {
      ImportDeclaration: (node) => check(node.source),
      ExportNamedDeclaration: (node) => check(node.source),
      ExportAllDeclaration: (node) => check(node.source),
      ImportExpression: (node) => check(node.source),
    };
  },
};

module.exports = { rules: { 'import-boundaries': rule } };
