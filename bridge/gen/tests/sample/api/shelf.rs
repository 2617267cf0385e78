//! A sample API for the generator's snapshot tests: one call, one accessor
//! and a small family of results using every field type.

/// Opens a shelf named `name`.
///
/// Thread-safety: safe from any thread.
#[bridge_fn(out = "shelf")]
pub fn shelf_open(name: &str) -> Result<Shelf> {
    unimplemented!()
}

/// The shelf's inventory.
///
/// Thread-safety: safe from any thread.
#[bridge_fn(out = "inventory")]
pub fn shelf_inventory(shelf: &Shelf) -> Result<Inventory> {
    unimplemented!()
}

bridge_results! {
    /// What a shelf holds.
    #[result(engine = "shop::Inventory")]
    pub struct Inventory {
        /// The shelf's label.
        pub label: String,
        /// The aisle, when it has one.
        pub aisle: Option<String>,
        /// How many items fit.
        pub capacity: u32,
        /// The weight limit in grams, when there is one.
        pub max_grams: Option<u64>,
        /// Whether the shelf is open.
        pub open: bool,
        /// The tags.
        pub tags: Vec<String>,
        /// The bin numbers.
        #[field(item = "bin")]
        pub bins: Vec<u32>,
        /// The items, in shelf order.
        pub items: Vec<Item>,
        /// The suppliers, as a list of their own.
        #[field(handle = "SupplierList")]
        pub suppliers: Vec<Supplier>,
        /// The shelf's label as a handle of its own.
        #[field(c = "label_info", java = "labelInfo")]
        pub label_info: Label,
    }

    /// One item on a shelf.
    #[result(engine = "shop::Item", item, java = "Inventory.Item")]
    pub struct Item {
        /// The item id.
        #[field(c = "id", go = "ItemID")]
        pub item_id: String,
        /// The count on the shelf.
        pub count: u64,
        /// The barcodes.
        pub codes: Vec<String>,
    }

    /// A supplier.
    #[result(engine = "shop::Supplier", item)]
    pub struct Supplier {
        /// The supplier's name.
        pub name: String,
    }

    /// The suppliers of a shelf.
    #[result(list)]
    pub struct SupplierList(pub Vec<Supplier>);

    /// A label.
    #[result(engine = "shop::Label", py = "ShelfLabel")]
    pub struct Label {
        /// The text.
        pub text: String,
    }
}
