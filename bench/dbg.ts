import { benchEndpoints } from './endpoints.js';
console.log(await benchEndpoints(2));
