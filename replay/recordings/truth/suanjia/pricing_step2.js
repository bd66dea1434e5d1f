/* gpurent replay recording, truth scene step 2: our own script, not 算家云's (the default
 * scene's pricing.js with the changes its PROVENANCE lists); every value is invented. */
(function () {
  "use strict";

  var market = [
    { region: "华东一区", gpu: "RTX 4090", memory: 24, price: 1.88, idle: 3 },
    { region: "华东一区", gpu: "RTX 3090", memory: 24, price: 1.2, idle: 0 },
    { region: "华东一区", gpu: "L40", memory: 48, price: 3.9, idle: 0 },
    { region: "华东一区", label: "vGPU-32G", price: 0.99, idle: 8 },
    { region: "华北一区", gpu: "A100", memory: 80, price: 6.2, idle: 0 },
    { region: "华北一区", gpu: "RTX 4090", memory: 24, priceText: "¥1.8.8/小时", idle: 12 },
    { region: "华北一区", label: "", price: 3.3, idle: 4 }
  ];

  function cell(row, className, text) {
    var td = document.createElement("td");
    td.className = className;
    td.textContent = text;
    row.appendChild(td);
  }

  function render() {
    var body = document.querySelector("#gpu-market tbody");
    market.forEach(function (item) {
      var row = document.createElement("tr");
      row.className = "gpu-row";
      cell(row, "region", item.region);
      cell(row, "gpu", item.label !== undefined ? item.label : item.gpu + " " + item.memory + "G");
      cell(row, "price", item.priceText || "¥" + item.price.toFixed(2) + "/小时");
      cell(row, "stock", item.idle > 0 ? "剩余" + item.idle + "卡" : "已租满");
      body.appendChild(row);
    });
  }

  // Render after a tick, as a framework would after mounting: a reader that does not
  // wait for the rows sees an empty table.
  setTimeout(render, 50);
})();
