const env = process.env;
const port = env.PORT || 3000;

async function check() {
  const response = await fetch(`http://localhost:${port}/health`);
  return response.ok;
}

module.exports = { check };
