// Globals of the Node-RED editor page, for code that runs inside page.evaluate().
/* eslint-disable @typescript-eslint/no-explicit-any */
declare const RED: any;
declare const $: any;
